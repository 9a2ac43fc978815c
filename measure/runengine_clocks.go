package measure

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/engine"
)

// lockClocks locks the GPU clocks for gpu.lock_clocks (a refusal explained by clockLockError)
// and returns the lock and the restore to defer: it restores the clocks, logs it, and joins a
// failure, with what to do, into *err, the error the run returns.
func lockClocks(ctx context.Context, env *Deps) (*engine.ClockLock, func(err *error), error) {
	lock, err := engine.LockClocks(ctx, nil, engine.LockOptions{})
	if err != nil {
		return nil, nil, clockLockError(err)
	}
	env.Log.Info("GPU clocks locked", "commands", strings.Join(lock.Commands, "; "))
	restore := func(err *error) {
		if rerr := lock.Restore(context.WithoutCancel(ctx)); rerr != nil {
			*err = errors.Join(*err, fmt.Errorf("gpu.lock_clocks: restoring the clocks: %w; run nvidia-smi -rgc and -rmc as root", rerr))
			return
		}
		env.Log.Info("GPU clocks restored")
	}
	return lock, restore, nil
}
