package wire

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is a machine-readable error discriminator carried beside the
// protocol's error string. Every code Reins uses anywhere (link frames, tool
// results, the admin channel, close frames) is declared here and listed in
// table, so there is one answer to "what does this code mean".
type Code string

// Prickly's codes, plus Reins' own.
const (
	CodeUnknownMethod   Code = "unknown_method"
	CodeUnknownTool     Code = "unknown_tool"
	CodeBadParams       Code = "bad_params"
	CodeNoSuchTab       Code = "no_such_tab"
	CodeTabNotInSession Code = "tab_not_in_session"
	CodeNoSuchSession   Code = "no_such_session"
	CodeNoSuchBrowser   Code = "no_such_browser"
	CodeAttachFailed    Code = "attach_failed"
	CodeRestrictedURL   Code = "restricted_url"
	CodeBlockedURL      Code = "blocked_url"
	CodeNavigatedAway   Code = "navigated_away"
	CodeTimeout         Code = "timeout"
	CodeInternal        Code = "internal"
	CodePaused          Code = "paused"
	CodeNotShared       Code = "not_shared"
	CodeUnauthorized    Code = "unauthorized"
	// CodeBusy: a peer already has as many commands running and waiting as
	// it may; the command did not run.
	CodeBusy Code = "busy"
	// CodeDialogOpen: the tab shows a JavaScript dialog (alert, confirm,
	// prompt, beforeunload) that blocks its page; nothing ran, and nothing
	// that needs the page can until the dialog is answered.
	CodeDialogOpen Code = "dialog_open"
	// CodeUnsupported: the browser (an engine or a transport) cannot do
	// what was asked, for example device emulation in Firefox; asking again
	// will not help.
	CodeUnsupported Code = "unsupported"
	// CodeNotAllowed: the person has not allowed this in Reins' settings
	// (managing extensions, raw DevTools for a developer agent), or the
	// request reaches beyond what even an allowed caller may touch.
	CodeNotAllowed Code = "not_allowed"
	// CodeToolDisabled: the person turned the tool off in Reins' settings.
	CodeToolDisabled Code = "tool_disabled"
	// CodeScriptError: javascript_tool's script threw.
	CodeScriptError Code = "script_error"
	// CodeNavigationFailed: the browser could not load the URL (DNS,
	// refused connection, TLS …).
	CodeNavigationFailed Code = "navigation_failed"
	// CodeShuttingDown: the companion is stopping.
	CodeShuttingDown Code = "shutting_down"
	// CodeBadFrame: a link frame that is not a JSON object, or a hello that
	// is not one.
	CodeBadFrame Code = "bad_frame"
	// CodeFrameTooLarge: a link frame over MaxFrameBytes.
	CodeFrameTooLarge Code = "frame_too_large"
	// CodeBrowserBlocked: the person blocked this browser profile.
	CodeBrowserBlocked Code = "browser_blocked"
	// The admin channel's: the token store, pairing and the channel itself.
	CodeInvalidName         Code = "invalid_name"
	CodeNameInUse           Code = "name_in_use"
	CodeNotFound            Code = "not_found"
	CodeKeychainUnavailable Code = "keychain_unavailable"
	CodeNoSuchOffer         Code = "no_such_offer"
	CodeNoSuchBackend       Code = "no_such_backend"
	CodeNotImplemented      Code = "not_implemented"
)

// WebSocket close codes Reins sends on the extension link, beside the
// standard ones. The table gives each its code; the extension's tests read
// them from testdata/error_codes.json.
const (
	CloseGoingAway       = 1001
	ClosePolicyViolation = 1008
	CloseMessageTooBig   = 1009
	// CloseUnauthorized: the socket did not prove the link key.
	CloseUnauthorized = 4001
	// CloseRefused: the person refused the browser profile.
	CloseRefused = 4003
)

// CodeInfo is one row of the error table.
type CodeInfo struct {
	Code    Code   `json:"code"`
	Meaning string `json:"meaning"`
	// HTTP is the status the admin channel answers with.
	HTTP int `json:"http"`
	// Close is the WebSocket close code of a link that ends for this
	// reason; 0 where the code never ends a link.
	Close int `json:"close,omitempty"`
}

// table is the one error table: every code, what it means, its HTTP status
// on the admin channel and, where one applies, its WebSocket close code.
// testdata/error_codes.json is its copy for the extension's tests; a test
// keeps the two equal. One entry a line.
var table = []CodeInfo{
	{CodeUnknownMethod, "the peer has no such method", http.StatusBadRequest, 0},
	{CodeUnknownTool, "no such tool in the caller's catalog", http.StatusBadRequest, 0},
	{CodeBadParams, "the request's parameters are malformed or out of range", http.StatusBadRequest, 0},
	{CodeNoSuchTab, "no tab has that id", http.StatusNotFound, 0},
	{CodeTabNotInSession, "the tab belongs to another agent", http.StatusForbidden, 0},
	{CodeNoSuchSession, "the caller has no session", http.StatusNotFound, 0},
	{CodeNoSuchBrowser, "no connected browser has that id, or it disconnected", http.StatusNotFound, 0},
	{CodeAttachFailed, "the browser could not attach its debugger to the tab", http.StatusBadGateway, 0},
	{CodeRestrictedURL, "the page cannot be automated or the URL may not be opened", http.StatusForbidden, 0},
	{CodeBlockedURL, "the person's rules block the URL", http.StatusForbidden, 0},
	{CodeNavigatedAway, "the tab left the origin the agent last saw; nothing was done", http.StatusConflict, 0},
	{CodeTimeout, "no answer in time", http.StatusGatewayTimeout, 0},
	{CodeInternal, "an unexpected failure", http.StatusInternalServerError, 0},
	{CodePaused, "the person paused automation", http.StatusForbidden, 0},
	{CodeNotShared, "the tab is not shared with Reins", http.StatusForbidden, 0},
	{CodeUnauthorized, "the caller did not prove who it is, or may not do this", http.StatusForbidden, CloseUnauthorized},
	{CodeBusy, "the peer has too many commands in flight; this one did not run", http.StatusTooManyRequests, 0},
	{CodeDialogOpen, "a dialog blocks the tab's page; nothing ran", http.StatusConflict, 0},
	{CodeUnsupported, "the browser cannot do this; asking again will not help", http.StatusNotImplemented, 0},
	{CodeNotAllowed, "the person has not allowed this, or it reaches beyond what any caller may touch", http.StatusForbidden, 0},
	{CodeToolDisabled, "the person turned the tool off", http.StatusForbidden, 0},
	{CodeScriptError, "the page's script threw", http.StatusBadGateway, 0},
	{CodeNavigationFailed, "the browser could not load the URL", http.StatusBadGateway, 0},
	{CodeShuttingDown, "the companion is stopping", http.StatusServiceUnavailable, CloseGoingAway},
	{CodeBadFrame, "a link frame is not a JSON object of the expected kind", http.StatusBadRequest, ClosePolicyViolation},
	{CodeFrameTooLarge, "a link frame is over the size limit", http.StatusRequestEntityTooLarge, CloseMessageTooBig},
	{CodeBrowserBlocked, "the person blocked this browser profile", http.StatusForbidden, CloseRefused},
	{CodeInvalidName, "the name is not a valid token name", http.StatusBadRequest, 0},
	{CodeNameInUse, "a token already has that name", http.StatusConflict, 0},
	{CodeNotFound, "no token has that name", http.StatusNotFound, 0},
	{CodeKeychainUnavailable, "the OS keychain is not reachable", http.StatusServiceUnavailable, 0},
	{CodeNoSuchOffer, "no pairing offer has that id", http.StatusNotFound, 0},
	{CodeNoSuchBackend, "no paired backend has that id", http.StatusNotFound, 0},
	{CodeNotImplemented, "this companion does not offer that", http.StatusNotImplemented, 0},
}

// Table returns a copy of the error table, in declaration order.
func Table() []CodeInfo { return append([]CodeInfo(nil), table...) }

// Codes lists every code, for tests and documentation.
var Codes = func() []Code {
	out := make([]Code, len(table))
	for i, c := range table {
		out[i] = c.Code
	}
	return out
}()

var byCode = func() map[Code]CodeInfo {
	m := make(map[Code]CodeInfo, len(table))
	for _, c := range table {
		m[c.Code] = c
	}
	return m
}()

// Info returns code's row; a code not in the table reads as internal's.
func Info(code Code) CodeInfo {
	if c, ok := byCode[code]; ok {
		return c
	}
	return byCode[CodeInternal]
}

// HTTPStatus is the HTTP status the admin channel answers err with.
func HTTPStatus(err error) int { return Info(CodeOf(err)).HTTP }

// CloseCode is the WebSocket close code for a link that ends because of
// cause: the close code of the first error in cause's chain whose code has
// one, or CloseGoingAway.
func CloseCode(cause error) int {
	if c := closeOf(cause); c != 0 {
		return c
	}
	return CloseGoingAway
}

func closeOf(err error) int {
	if e, ok := err.(*Error); ok {
		if c := Info(e.Code).Close; c != 0 {
			return c
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if next := u.Unwrap(); next != nil {
			return closeOf(next)
		}
	case interface{ Unwrap() []error }:
		for _, next := range u.Unwrap() {
			if c := closeOf(next); c != 0 {
				return c
			}
		}
	}
	return 0
}

// Sentinel errors for the codes that callers test for with errors.Is (any
// *Error of the same code matches). Wrap them with %w; CodeOf finds the
// code of any error.
var (
	ErrUnknownMethod  = &Error{Code: CodeUnknownMethod, Message: "unknown method"}
	ErrBadParams      = &Error{Code: CodeBadParams, Message: "bad params"}
	ErrNoSuchTab      = &Error{Code: CodeNoSuchTab, Message: "no such tab"}
	ErrNoSuchBrowser  = &Error{Code: CodeNoSuchBrowser, Message: "no such browser"}
	ErrAttachFailed   = &Error{Code: CodeAttachFailed, Message: "attach failed"}
	ErrRestrictedURL  = &Error{Code: CodeRestrictedURL, Message: "restricted url"}
	ErrTimeout        = &Error{Code: CodeTimeout, Message: "timeout"}
	ErrInternal       = &Error{Code: CodeInternal, Message: "internal error"}
	ErrPaused         = &Error{Code: CodePaused, Message: "automation is paused"}
	ErrNotShared      = &Error{Code: CodeNotShared, Message: "tab is not shared"}
	ErrNotImplemented = &Error{Code: CodeNotImplemented, Message: "not implemented"}
)

// Error is an error with a wire code. Two Errors match under errors.Is when
// their codes match, so a remote error decoded from a frame is Is() the
// local sentinel of the same code.
type Error struct {
	Code    Code
	Message string
	// Err is the cause, when there is one; Message already says it.
	Err error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	var t *Error
	if errors.As(target, &t) {
		return t.Code == e.Code
	}
	return false
}

// Errorf returns an error with code c and a formatted message. The message
// should be lowercase and say what happened in the person's terms. A %w verb
// makes its operand the cause, as with fmt.Errorf.
func Errorf(c Code, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	e := &Error{Code: c, Message: err.Error()}
	switch err.(type) {
	case interface{ Unwrap() error }, interface{ Unwrap() []error }:
		e.Err = err
	}
	return e
}

// CodeOf maps any error to its wire code; errors without one are internal.
// A context deadline becomes timeout.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if isDeadline(err) {
		return CodeTimeout
	}
	return CodeInternal
}

// Remote builds the error for a response frame's error string and code. A
// code that is not in the table (a newer or broken peer) reads as
// internal, with the peer's code kept in the message: every error that
// leaves the companion carries a code its callers know.
func Remote(msg string, code Code) error {
	if code == "" {
		code = CodeInternal
	}
	if _, known := byCode[code]; !known {
		msg = fmt.Sprintf("%s (the peer's code %q)", msg, code)
		code = CodeInternal
	}
	return &Error{Code: code, Message: msg}
}
