package ctrlproc

import (
	"os"
	"testing"
)

func TestReadUsageOfThisProcess(t *testing.T) {
	u, err := ReadUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.PeakRSS <= 0 || u.CPUSeconds < 0 {
		t.Fatalf("usage %+v", u)
	}
}

func TestReadUsageOfNoProcessSaysWhy(t *testing.T) {
	if _, err := ReadUsage(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}
