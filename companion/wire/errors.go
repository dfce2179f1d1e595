package wire

import (
	"errors"
	"fmt"
)

// Code is a machine-readable error discriminator carried beside the
// protocol's error string.
type Code string

// Prickly's codes, plus Reins' paused, not_shared and unauthorized.
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
	// CodeUnsupported: this browser cannot do what was asked at all, for
	// example answer a page's dialog in Firefox, whose WebExtensions cannot
	// see one.
	CodeUnsupported Code = "unsupported"
)

// Codes lists every code, for tests and documentation.
var Codes = []Code{
	CodeUnknownMethod, CodeUnknownTool, CodeBadParams, CodeNoSuchTab,
	CodeTabNotInSession, CodeNoSuchSession, CodeNoSuchBrowser, CodeAttachFailed,
	CodeRestrictedURL, CodeBlockedURL, CodeNavigatedAway, CodeTimeout,
	CodeInternal, CodePaused, CodeNotShared, CodeUnauthorized, CodeBusy,
	CodeDialogOpen, CodeUnsupported,
}

// Sentinel errors, one per code. Wrap them with %w; CodeOf finds the code.
var (
	ErrUnknownMethod   = &Error{Code: CodeUnknownMethod, Message: "unknown method"}
	ErrUnknownTool     = &Error{Code: CodeUnknownTool, Message: "unknown tool"}
	ErrBadParams       = &Error{Code: CodeBadParams, Message: "bad params"}
	ErrNoSuchTab       = &Error{Code: CodeNoSuchTab, Message: "no such tab"}
	ErrTabNotInSession = &Error{Code: CodeTabNotInSession, Message: "tab not in session"}
	ErrNoSuchSession   = &Error{Code: CodeNoSuchSession, Message: "no such session"}
	ErrNoSuchBrowser   = &Error{Code: CodeNoSuchBrowser, Message: "no such browser"}
	ErrAttachFailed    = &Error{Code: CodeAttachFailed, Message: "attach failed"}
	ErrRestrictedURL   = &Error{Code: CodeRestrictedURL, Message: "restricted url"}
	ErrBlockedURL      = &Error{Code: CodeBlockedURL, Message: "blocked url"}
	ErrNavigatedAway   = &Error{Code: CodeNavigatedAway, Message: "navigated away"}
	ErrTimeout         = &Error{Code: CodeTimeout, Message: "timeout"}
	ErrInternal        = &Error{Code: CodeInternal, Message: "internal error"}
	ErrPaused          = &Error{Code: CodePaused, Message: "automation is paused"}
	ErrNotShared       = &Error{Code: CodeNotShared, Message: "tab is not shared"}
	ErrUnauthorized    = &Error{Code: CodeUnauthorized, Message: "unauthorized"}
	ErrBusy            = &Error{Code: CodeBusy, Message: "too many commands"}
	ErrDialogOpen      = &Error{Code: CodeDialogOpen, Message: "a dialog is open"}
	ErrUnsupported     = &Error{Code: CodeUnsupported, Message: "not supported by this browser"}
)

// Error is an error with a wire code. Two Errors match under errors.Is when
// their codes match, so a remote error decoded from a frame is Is() the
// local sentinel of the same code.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	var t *Error
	if errors.As(target, &t) {
		return t.Code == e.Code
	}
	return false
}

// Errorf returns an error with code c and a formatted message. The message
// should be lowercase and say what happened in the person's terms.
func Errorf(c Code, format string, args ...any) error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
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

// Remote builds the error for a response frame's error string and code.
func Remote(msg string, code Code) error {
	if code == "" {
		code = CodeInternal
	}
	return &Error{Code: code, Message: msg}
}
