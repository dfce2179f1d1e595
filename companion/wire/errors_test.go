package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/error_codes.json from the error table")

// errorFixture is testdata/error_codes.json, the error table as the
// extension's tests read it.
type errorFixture struct {
	Codes []CodeInfo `json:"codes"`
}

// readFixture decodes testdata/name, a file the extension's tests read too,
// into v; a field v does not know fails, so the two sides cannot drift.
func readFixture(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestErrorTableFixture keeps the extension's copy of the error table equal
// to the table itself: codes, meanings, HTTP statuses and close codes.
func TestErrorTableFixture(t *testing.T) {
	want := errorFixture{Codes: Table()}
	if *update {
		// One row a line, like the table, so that adding a code is a
		// one-line change on both sides.
		var b bytes.Buffer
		b.WriteString("{\"codes\": [\n")
		for i, c := range want.Codes {
			row, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("  ")
			b.Write(row)
			if i < len(want.Codes)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("]}\n")
		if err := os.WriteFile("testdata/error_codes.json", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got errorFixture
	readFixture(t, "error_codes.json", &got)
	if len(got.Codes) != len(want.Codes) {
		t.Fatalf("the fixture has %d codes, the table %d; run go test ./companion/wire -run TestErrorTableFixture -update", len(got.Codes), len(want.Codes))
	}
	for i := range want.Codes {
		if got.Codes[i] != want.Codes[i] {
			t.Errorf("fixture row %d = %+v, table %+v", i, got.Codes[i], want.Codes[i])
		}
	}
}

// TestEveryCodeIsInTheTable reads errors.go: every Code constant declared
// there has a row, and every row a status, so no code escapes the table.
func TestEveryCodeIsInTheTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok {
					t.Fatalf("a Code constant that is not a literal: %#v", v)
				}
				code, _ := strconv.Unquote(lit.Value)
				declared++
				if _, ok := byCode[Code(code)]; !ok {
					t.Errorf("code %q is declared but not in the table", code)
				}
			}
		}
	}
	if declared != len(table) {
		t.Errorf("%d codes declared, %d rows in the table", declared, len(table))
	}
	seen := map[Code]bool{}
	for _, c := range table {
		if seen[c.Code] {
			t.Errorf("duplicate row for %q", c.Code)
		}
		seen[c.Code] = true
		if c.HTTP < 400 || c.HTTP > 599 || c.Meaning == "" {
			t.Errorf("row %+v needs an error status and a meaning", c)
		}
	}
}

func TestErrorUnwrapsItsCause(t *testing.T) {
	cause := errors.New("disk full")
	err := Errorf(CodeInternal, "saving the tab list: %w", cause)
	if !errors.Is(err, cause) || CodeOf(err) != CodeInternal || err.Error() != "saving the tab list: disk full" {
		t.Fatalf("err = %v (code %s); want the cause kept and the message unchanged", err, CodeOf(err))
	}
	// The outer code wins; the cause's code is still found by errors.Is.
	inner := Errorf(CodeNoSuchTab, "no tab 4")
	err = Errorf(CodeBadParams, "reading tab 4: %w", inner)
	if CodeOf(err) != CodeBadParams || !errors.Is(err, ErrNoSuchTab) || !errors.Is(err, ErrBadParams) {
		t.Fatalf("code %s, is no_such_tab %v", CodeOf(err), errors.Is(err, ErrNoSuchTab))
	}
	// %v keeps no cause.
	if errors.Unwrap(Errorf(CodeInternal, "x: %v", cause)) != nil {
		t.Fatal("an operand formatted with v became a cause")
	}
}

func TestHTTPStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{Errorf(CodeBadParams, "x"), 400},
		{fmt.Errorf("wrapped: %w", ErrNotImplemented), 501},
		{Errorf(CodeNameInUse, "x"), 409},
		{errors.New("plain"), 500},
		{Remote("from a newer peer", "made_up"), 500},
	} {
		if got := HTTPStatus(tc.err); got != tc.want {
			t.Errorf("HTTPStatus(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// Close codes follow the code of the reason a link ends, wherever in the
// chain it sits, and never its text.
func TestCloseCode(t *testing.T) {
	blocked := &Error{Code: CodeBrowserBlocked, Message: "frame over 64 MiB"} // a misleading text
	for _, tc := range []struct {
		name  string
		cause error
		want  int
	}{
		{"blocked", blocked, CloseRefused},
		{"blocked, wrapped by the pending requests' error", &Error{Code: CodeNoSuchBrowser, Message: "browser 1 disconnected", Err: blocked}, CloseRefused},
		{"too large", Errorf(CodeFrameTooLarge, "frame over 64 MiB"), CloseMessageTooBig},
		{"bad frame, wrapped twice", fmt.Errorf("b1: %w", fmt.Errorf("x: %w", Errorf(CodeBadFrame, "not json"))), ClosePolicyViolation},
		{"unauthorized", Errorf(CodeUnauthorized, "no proof"), CloseUnauthorized},
		{"a text that names a code", errors.New("frame_too_large"), CloseGoingAway},
		{"no code", errors.New("connection lost"), CloseGoingAway},
		{"a code without a close code", ErrNoSuchBrowser, CloseGoingAway},
		{"joined", errors.Join(errors.New("a"), Errorf(CodeFrameTooLarge, "b")), CloseMessageTooBig},
		{"nil", nil, CloseGoingAway},
	} {
		if got := CloseCode(tc.cause); got != tc.want {
			t.Errorf("%s: CloseCode = %d, want %d", tc.name, got, tc.want)
		}
	}
}
