package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/10xdev/gw10/harness/checks"
	"github.com/10xdev/gw10/harness/step"
	"github.com/10xdev/gw10/harness/steps"
)

// runHint prints the longer hint of a check of a step.
func runHint(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("hint", flag.ContinueOnError)
	stepDir := fs.String("step", steps.Default().Dir, "the step whose check it is")
	more := fs.Int("more", 0, "for a check, 1: where to look (make hint ID=<check> MORE=1); 2: its design, in words (MORE=2). Read each once you have tried")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	root, err := filepath.Abs(".")
	if err != nil {
		return err
	}
	st, err := steps.ForDir(root, *stepDir)
	if err != nil {
		return err
	}
	// The chapter's questions, where the chapter is (a check's or a
	// clause's hint needs none: run outside the workbook's root, it has none).
	questions, chapterErr := st.ReadQuestions(root)
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gw10 hint [--more=1|2] <check-id, clause-id or question-id>   (make hint ID=<id> [MORE=1|2])")
		fmt.Fprintln(os.Stderr, "checks:")
		for _, c := range st.Checks {
			fmt.Fprintf(os.Stderr, "  %-20s %s\n", c.ID, c.Title)
		}
		if len(st.Contract) > 0 {
			fmt.Fprintln(os.Stderr, "clauses of the contract (docs/contract.md):")
			for _, cl := range st.Contract {
				fmt.Fprintf(os.Stderr, "  %-20s %s\n", cl.ID, cl.Rule)
			}
		}
		fmt.Fprintf(os.Stderr, "the chapter's questions (%s): %s\n", strings.Join(st.ChapterParts(), ", "), questionIDs(questions))
		return exitError{2}
	}
	for _, q := range questions {
		if q.ID == fs.Arg(0) {
			fmt.Print(questionHint(st, q))
			return nil
		}
	}
	if strings.HasPrefix(fs.Arg(0), "q-") && chapterErr != nil {
		return fmt.Errorf("question %s: %w", fs.Arg(0), chapterErr)
	}
	if cl, ok := st.Clause(fs.Arg(0)); ok {
		fmt.Print(clauseHint(st, cl))
		return nil
	}
	c, ok := checks.Find(st.Checks, fs.Arg(0))
	if !ok {
		var clauses []string
		for _, cl := range st.Contract {
			clauses = append(clauses, cl.ID)
		}
		return fmt.Errorf("no check, clause or question %q; the checks are: %s; the clauses: %s; the chapter's questions: %s",
			fs.Arg(0), checks.IDs(st.Checks), strings.Join(clauses, ", "), questionIDs(questions))
	}
	if *more < 0 || *more > 2 {
		return fmt.Errorf("MORE=%d: a check's hint has two more levels, MORE=1 (where to look) and MORE=2 (its design, in words)", *more)
	}
	fmt.Print(checkHint(st, c, step.About(questions, c.ID), *more))
	return nil
}

// checkHint says what a check requires and which of the chapter's
// questions lead to it. Each level more gives away more, for a learner who
// has tried: 1, where to look (its Direction); 2, how to build it (its
// LongHint).
func checkHint(st step.Step, c checks.Check, questions []step.Question, more int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s\nproves: %s\n", c.ID, c.Title, c.SeedRef)
	for _, id := range c.Clauses {
		if cl, ok := st.Clause(id); ok {
			fmt.Fprintf(&b, "  %-15s %s\n", cl.ID, cl.Rule)
		}
	}
	switch more {
	case 1:
		fmt.Fprintf(&b, "\nIt requires: %s\n\nWhere to look:\n%s\n\nThe design, in words, once you have tried again: make hint ID=%s MORE=2\n", c.Hint, c.Direction, c.ID)
		return b.String()
	case 2:
		fmt.Fprintf(&b, "\n%s\n\nIn short: %s\nMore: %s\n", c.LongHint, c.Hint, st.DocAnchor(c.ID))
		return b.String()
	}
	fmt.Fprintf(&b, "\nIt requires: %s\n", c.Hint)
	if len(questions) > 0 {
		b.WriteString("\nThe chapter's questions that lead to it (make hint ID=<question> prints one):\n")
		for _, q := range questions {
			fmt.Fprintf(&b, "  %-22s %s\n", q.ID, q.Text)
			if q.Doc != st.Chapter {
				fmt.Fprintf(&b, "  %-22s (asked in %s#%s)\n", "", q.Doc, q.ID)
			}
		}
	}
	fmt.Fprintf(&b, "\nWhat the check does: %s\n", st.DocAnchor(c.ID))
	fmt.Fprintf(&b, "Where to look, once you have tried: make hint ID=%s MORE=1\n", c.ID)
	return b.String()
}

// questionHint prints one of the chapter's questions and where its answer
// is, not the answer.
func questionHint(st step.Step, q step.Question) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s#%s)\n\n%s\n\n", q.ID, q.Doc, q.ID, q.Text)
	if q.Answer == "" {
		if where := st.EvidenceFor(q.ID); where != "" {
			fmt.Fprintf(&b, "No written answer: the evidence has it. Write your answer down first, then look at\n  %s.\n", where)
		} else {
			fmt.Fprintf(&b, "No written answer: %s#%s says what to run or read.\n", q.Doc, q.ID)
		}
	} else {
		fmt.Fprintf(&b, "Write your answer down first. Then compare: %s\n", q.Answer)
	}
	return b.String()
}

// questionIDs lists the questions' IDs, comma-separated.
func questionIDs(qs []step.Question) string {
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.ID
	}
	return strings.Join(ids, ", ")
}

// clauseHint says what a clause of the contract requires and which checks
// prove it (or that none does yet).
func clauseHint(st step.Step, cl step.Clause) string {
	var b strings.Builder
	if cl.Plain != "" {
		fmt.Fprintf(&b, "%s — %s\n\nIn full: %s\n\n", cl.ID, cl.Plain, cl.Rule)
	} else {
		fmt.Fprintf(&b, "%s — %s\n\n", cl.ID, cl.Rule)
	}
	var by []string
	for _, c := range st.Checks {
		for _, id := range c.Clauses {
			if id == cl.ID {
				by = append(by, c.ID)
			}
		}
	}
	if len(by) == 0 {
		b.WriteString("No check proves it yet: a controller that breaks it can still pass make check.\n")
	} else {
		fmt.Fprintf(&b, "Proved by: %s (make hint ID=<check> says how).\n", strings.Join(by, ", "))
	}
	b.WriteString("The whole contract: docs/contract.md\n")
	return b.String()
}
