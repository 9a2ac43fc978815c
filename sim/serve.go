package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrCrashed is Serve's error when the injected crash fault stopped the simulator.
var ErrCrashed = errors.New("sim: stopped by the injected crash fault")

// Serve starts a simulator of cfg (Start), writes its URL on a line of its own to w, and serves
// until ctx is cancelled (nil) or the injected crash fault stops it (ErrCrashed): what
// `speedmatrix sim` does in the foreground. A cancelled ctx is how a signal stops it: a handler
// of its own would race the caller's.
func Serve(ctx context.Context, cfg Config, w io.Writer) error {
	srv, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, srv.URL())
	<-srv.Done()
	if srv.Crashed() {
		return ErrCrashed
	}
	return nil
}
