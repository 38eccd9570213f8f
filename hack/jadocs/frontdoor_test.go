package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testDoors are the front doors of the fixture: small bounds, so that a test
// pads a page by a few characters rather than kilobytes.
var testDoors = []frontDoor{
	{page: "README.md", maxBytes: 200},
	{page: "docs/ja/README.md", maxChars: 60},
}

// writeFrontDoors writes english as README.md and japanese as
// docs/ja/README.md into a new temporary folder and returns it.
func writeFrontDoors(t *testing.T, english, japanese string) string {
	t.Helper()
	root := t.TempDir()
	for rel, text := range map[string]string{"README.md": english, "docs/ja/README.md": japanese} {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// A table row whose second cell holds exactly maxCell characters: "ア" is one
// character and three bytes, so the limit counts characters, not bytes.
var fullRow = "| `make test` | " + strings.Repeat("ア", maxCell) + " |\n"

const (
	englishDoor  = "# kit\n\n| | time |\n|---|---|\n| `make test` | 2 min 44 s |\n"
	japaneseDoor = "# キット\n\n| | 時間 |\n|---|---|\n| `make test` | 2分44秒 |\n"
)

// checkDoors checks the front doors at root against testDoors.
func checkDoors(t *testing.T, root string) []problem {
	t.Helper()
	problems, err := checkFrontDoors(root, testDoors)
	if err != nil {
		t.Fatal(err)
	}
	return problems
}

func TestFrontDoorsWithinTheirBoundsPass(t *testing.T) {
	if problems := checkDoors(t, writeFrontDoors(t, englishDoor, japaneseDoor)); len(problems) > 0 {
		t.Errorf("front doors within their bounds have problems:\n%v", problems)
	}
}

func TestAFrontDoorOneByteOverItsBoundFails(t *testing.T) {
	english := englishDoor + strings.Repeat("x", testDoors[0].maxBytes-len(englishDoor))
	if problems := checkDoors(t, writeFrontDoors(t, english, japaneseDoor)); len(problems) > 0 {
		t.Fatalf("a README of exactly %d bytes has problems:\n%v", testDoors[0].maxBytes, problems)
	}
	p := wantOne(t, checkDoors(t, writeFrontDoors(t, english+"x", japaneseDoor)), "README.md", 0, pageTooLarge)
	if !strings.Contains(p.msg, "201 bytes, more than the 200") || !strings.Contains(p.msg, "docs/performance.md") {
		t.Errorf("the message does not give the size, the bound and where the history goes: %s", p.msg)
	}
}

func TestTheJapaneseFrontDoorIsCountedInCharacters(t *testing.T) {
	// 60 characters but 140 bytes: within its bound.
	japanese := japaneseDoor + strings.Repeat("ア", testDoors[1].maxChars-len([]rune(japaneseDoor)))
	if problems := checkDoors(t, writeFrontDoors(t, englishDoor, japanese)); len(problems) > 0 {
		t.Fatalf("a Japanese README of exactly %d characters has problems:\n%v", testDoors[1].maxChars, problems)
	}
	p := wantOne(t, checkDoors(t, writeFrontDoors(t, englishDoor, japanese+"ア")), "docs/ja/README.md", 0, pageTooLarge)
	if !strings.Contains(p.msg, "61 characters, more than the 60") {
		t.Errorf("the message does not count characters: %s", p.msg)
	}
}

func TestATableCellOverItsBoundFailsAtItsLine(t *testing.T) {
	doors := []frontDoor{{page: "README.md"}, {page: "docs/ja/README.md"}} // no size bound here
	root := writeFrontDoors(t, englishDoor+fullRow, japaneseDoor+fullRow)
	if problems, err := checkFrontDoors(root, doors); err != nil || len(problems) > 0 {
		t.Fatalf("cells of exactly %d characters: problems %v, error %v", maxCell, problems, err)
	}
	longRow := strings.Replace(fullRow, "ア |", "アア |", 1)
	root = writeFrontDoors(t, englishDoor, japaneseDoor+longRow)
	problems, err := checkFrontDoors(root, doors)
	if err != nil {
		t.Fatal(err)
	}
	p := wantOne(t, problems, "docs/ja/README.md", 6, cellTooLong)
	if !strings.Contains(p.msg, "(column 2) holds 201 characters") {
		t.Errorf("the message does not name the column and its length: %s", p.msg)
	}
}

func TestATableInACodeBlockIsNoTable(t *testing.T) {
	doors := []frontDoor{{page: "README.md"}}
	root := writeFrontDoors(t, englishDoor+"```\n"+strings.Repeat("|", 2)+strings.Repeat("x", 300)+"|\n```\n", japaneseDoor)
	if problems, err := checkFrontDoors(root, doors); err != nil || len(problems) > 0 {
		t.Errorf("a code block's line counted as a table row: problems %v, error %v", problems, err)
	}
}

func TestTableCellsSplitOnUnescapedPipes(t *testing.T) {
	for line, want := range map[string][]string{
		"| a | b |":              {"a", "b"},
		"|a|b":                   {"a", "b"},
		"| `x \\| y` | z |":      {"`x \\| y`", "z"},
		"not | a row":            nil,
		"  | indented | row |  ": {"indented", "row"},
	} {
		if got := tableCells(line); strings.Join(got, "¦") != strings.Join(want, "¦") || (got == nil) != (want == nil) {
			t.Errorf("tableCells(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestRunReportsATooLargeFrontDoor(t *testing.T) {
	root := writeFixture(t) // the pairs' fixture, which has no front door: nothing to report
	var out bytes.Buffer
	if code, err := run(root, fixturePairs, &out); err != nil || code != 0 {
		t.Fatalf("run on the fixture = %d, %v:\n%s", code, err, out.String())
	}
	if err := os.WriteFile(filepath.Join(root, "README.md"), bytes.Repeat([]byte("x"), frontDoors[0].maxBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	code, err := run(root, fixturePairs, &out)
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.HasPrefix(out.String(), "README.md: 12289 bytes, more than the 12288") {
		t.Errorf("run = %d, want 1 and the README named first:\n%s", code, out.String())
	}
}
