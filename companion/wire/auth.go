package wire

// The link handshake (Reins addition; see companion/linkauth and the
// README's "The extension link"). Byte fields travel as standard base64.
// A strict v3 companion ignores hello's auth; a Reins companion refuses a
// hello without it.

// Link handshake events. EventAuth goes both ways: the companion's
// challenge, then the extension's proof. EventAuthKey carries the link key
// to an extension that paired with a code.
const (
	EventAuth    = "auth"
	EventAuthKey = "auth.key"
)

// HelloAuth is hello's auth field: the extension's nonce and whether it
// holds the link key or a pairing code.
type HelloAuth struct {
	V     int    `json:"v"`
	Nonce []byte `json:"nonce"`
	Mode  string `json:"mode"`
}

// AuthChallenge is the companion's answer to hello: its nonce and its proof.
type AuthChallenge struct {
	Nonce []byte `json:"nonce"`
	Proof []byte `json:"proof"`
}

// AuthProof is the extension's proof, sent once it checked the companion's.
type AuthProof struct {
	Proof []byte `json:"proof"`
}

// AuthKey is the link key, wrapped under the pairing code's secret, with the
// key-mode proof that lets the extension check what it unwrapped.
type AuthKey struct {
	Key   []byte `json:"key"`
	Proof []byte `json:"proof"`
}
