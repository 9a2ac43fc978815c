package engine

import (
	"errors"
	"log/slog"
	"os"
)

// KeepOrRemoveLogs deals with the server's log files once `engine serve` stopped it: after a
// failure both are kept, and the log line names them; after a clean stop the temporary ones
// are removed (the raw, unredacted log always; the redacted log unless chosen: --log-dir chose
// where it goes), so that no /tmp/speedmatrix-server-*.log is left behind.
func (srv *Server) KeepOrRemoveLogs(log *slog.Logger, chosen bool, stopErr error) {
	if stopErr != nil {
		log.Info("the server's log is kept for the failure", "log", srv.LogPath(), "raw_log", srv.RawLogPath())
		return
	}
	temp := []string{srv.RawLogPath()}
	if !chosen {
		temp = append(temp, srv.LogPath())
	}
	for _, p := range temp {
		if p != "" {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				log.Warn("removing the server's temporary log", "log", p, "err", err)
			}
		}
	}
}
