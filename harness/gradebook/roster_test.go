package gradebook

import (
	"strings"
	"testing"
)

func TestARosterTakesLinesAndCSV(t *testing.T) {
	roster := `# cohort 2027
https://github.com/ada/gw10.git main Ada Lovelace

../bob  -  Bob
git@github.com:carol/gw10.git
/srv/dan.bundle v1
"https://github.com/eve/gw10.git",refs/pull/7/head,"Eve, the second"
`
	got, err := ParseRoster(strings.NewReader(roster), "/cohort")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Line: 2, Repository: "https://github.com/ada/gw10.git", Ref: "main", Learner: "Ada Lovelace"},
		{Line: 4, Repository: "/bob", Learner: "Bob"},
		{Line: 5, Repository: "git@github.com:carol/gw10.git"},
		{Line: 6, Repository: "/srv/dan.bundle", Ref: "v1"},
		{Line: 7, Repository: "https://github.com/eve/gw10.git", Ref: "refs/pull/7/head", Learner: "Eve, the second"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestAClassroomExportIsARoster: a CSV whose header names its columns, in
// any order (GitHub Classroom's export has many).
func TestAClassroomExportIsARoster(t *testing.T) {
	roster := "assignment_name,github_username,roster_identifier,student_repository_url,points_awarded\r\n" +
		"lesson1,ada,Ada Lovelace,https://github.com/org/lesson1-ada,0\r\n" +
		"lesson1,bob,,https://github.com/org/lesson1-bob,0\r\n"
	got, err := ParseRoster(strings.NewReader(roster), "/x")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Repository != "https://github.com/org/lesson1-ada" || got[0].Learner != "ada" ||
		got[1].Repository != "https://github.com/org/lesson1-bob" || got[1].Ref != "" {
		t.Errorf("got %+v", got)
	}
}

func TestMalformedRosterLinesAreNamedByNumber(t *testing.T) {
	roster := `ok.git
"unterminated,main
a,b,c,d
-upload-pack=touch /tmp/x
ok.git
bad.git -evil
tab.git ` + "ma\x01in" + `
,main,nobody
`
	_, err := ParseRoster(strings.NewReader(roster), "/x")
	if err == nil {
		t.Fatal("a malformed roster was taken")
	}
	for _, want := range []string{
		"line 2: not a CSV record", "line 3: 4 fields", "line 4: the repository \"-upload-pack=touch\" starts with '-'",
		"line 5: the same repository and ref as line 1", "line 6: the ref \"-evil\" starts with '-'",
		"line 7: a control character", "line 8: no repository",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	if _, err := ParseRoster(strings.NewReader("# nothing\n\n"), "/x"); err == nil || !strings.Contains(err.Error(), "names no submission") {
		t.Errorf("an empty roster: %v", err)
	}
}
