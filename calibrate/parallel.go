package calibrate

import (
	"context"
	"runtime"
	"sync"
)

// Parallel runs do(i) for every i in [0, n), workers at a time (GOMAXPROCS when below 1), in
// any order. It stops handing out work at the first error or when ctx is done and returns that
// error (the first), else ctx's. progress, when not nil, is called after each do that succeeded
// with the number done so far and n, one call at a time.
func Parallel(ctx context.Context, workers, n int, do func(i int) error, progress func(done, n int)) error {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		done     int
	)
	for range workers {
		wg.Go(func() {
			for i := range next {
				err := do(i)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				done++
				if progress != nil && err == nil {
					progress(done, n)
				}
				mu.Unlock()
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
