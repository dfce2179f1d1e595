// Package tokens owns Reins' secrets: the agent tokens a person issues and
// the tokens of paired hosted backends.
//
// Secrets live in a Store: the OS keychain by default (service "Reins",
// accounts "agent:NAME" and "backend:ID"), or a 0600 file in the data dir for
// headless machines that have no keychain. Keychains cannot enumerate, so a
// names index without secrets (tokens.json) sits beside them in the data dir.
// The Manager keeps SHA-256 digests of agent tokens in memory, so verifying a
// bearer token compares in constant time and never touches the keychain.
//
// The index is the authority on which tokens exist: a token verifies only
// while its name is in the index. Issuing writes the secret before the index
// entry and revoking removes the index entry before the secret, so a reader
// that sees an entry can trust the secret, and a revoked token stops
// verifying even when the keychain refuses to delete it.
//
// Each agent token has a stable random id in the index. The agent a token
// authenticates is the principal "agent:<id>", which owns that agent's tabs
// across reconnects and restarts; the name is only a label. Revoking a token
// ends its principal for good, and issuing a token under a name used before
// makes a new principal: a new token is a new agent, even if it is the same
// program, and it does not inherit the tabs of the token it replaces.
// Indexes written before ids existed get them the first time a Manager loads
// them.
//
// Nothing here logs, and no error carries a token.
package tokens
