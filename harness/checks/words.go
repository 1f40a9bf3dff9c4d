package checks

import "fmt"

// Times reads "once", "twice", "3 times": causes are read by learners.
func Times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// ResultList reads reconciles by result as "3 success, 1 error".
func ResultList(d map[string]int) string { return resultList(d) }
