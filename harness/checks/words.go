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

// Count reads "1 retry", "2 retries".
func Count(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// ResultList reads reconciles by result as "3 success, 1 error".
func ResultList(d map[string]int) string { return resultList(d) }
