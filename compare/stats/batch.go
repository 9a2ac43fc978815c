package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// BatchMeans returns the mean of a serially correlated series x and the variance of that mean
// estimated by the method of non-overlapping batch means: x is cut into b consecutive batches of
// equal size (the remainder at the end is dropped from the variance, not from the mean), and the
// variance of the batch means divided by b estimates the variance of the overall mean when the
// batches are long enough to be nearly independent. b = 0 picks ⌊√n⌋ batches (at least 2,
// at most 30). The degrees of freedom of the variance are b − 1.
func BatchMeans(x []float64, b int) (mean, varMean float64, df int, err error) {
	n := len(x)
	if b == 0 {
		b = int(math.Sqrt(float64(n)))
		b = max(2, min(30, b))
	}
	if b < 2 || n < b {
		return 0, 0, 0, fmt.Errorf("batch means: %d values cannot form %d batches: %w", n, b, ErrTooFewSamples)
	}
	size := n / b
	means := make([]float64, b)
	for i := range b {
		means[i] = stat.Mean(x[i*size:(i+1)*size], nil)
	}
	mean = stat.Mean(x, nil)
	varMean = stat.Variance(means, nil) / float64(b)
	return mean, varMean, b - 1, nil
}
