package results

import "strings"

// validateFingerprint checks the fingerprint fields of the hardware: the power limit is a
// finite number not below 0, the persistence mode is nvidia-smi's word, and every other GPU
// process is named.
func validateFingerprint(v *validator, h *Hardware) {
	v.value("hardware", "power_limit_w", h.PowerLimitW)
	switch h.PersistenceMode {
	case "", "Enabled", "Disabled", "mixed":
	default:
		v.addf("hardware: persistence_mode %q is not Enabled, Disabled or mixed", h.PersistenceMode)
	}
	for i, p := range h.OtherGPUProcesses {
		if strings.TrimSpace(p) == "" {
			v.addf("hardware: other_gpu_processes[%d] is empty; name the process (pid and name)", i)
		}
	}
}
