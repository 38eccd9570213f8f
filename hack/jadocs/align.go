package main

// gap is a stretch of two sequences between two matched elements (or an
// end): the indexes, in order, of the English elements and of the Japanese
// ones that match nothing there.
type gap struct {
	en, ja []int
	// prevJa is the index of the last matched Japanese element before the
	// gap; -1 when the gap starts the sequence.
	prevJa int
}

// align matches the elements of two sequences, n English ones and m Japanese
// ones, as a longest common subsequence under equal, and returns what is left
// unmatched, gap by gap. Comparing by alignment rather than by position keeps
// one missing element from making every later one look wrong.
func align(n, m int, equal func(i, j int) bool) []gap {
	// lcs[i][j] is the length of the longest common subsequence of en[i:] and ja[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if equal(i, j) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var gaps []gap
	cur := gap{prevJa: -1}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && equal(i, j) && lcs[i][j] == lcs[i+1][j+1]+1:
			if len(cur.en)+len(cur.ja) > 0 {
				gaps = append(gaps, cur)
			}
			cur = gap{prevJa: j}
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			cur.ja = append(cur.ja, j)
			j++
		default:
			cur.en = append(cur.en, i)
			i++
		}
	}
	if len(cur.en)+len(cur.ja) > 0 {
		gaps = append(gaps, cur)
	}
	return gaps
}
