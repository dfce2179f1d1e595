//go:build soak

package e2e

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestSoak is the fault suite for REINS_SOAK (a duration), built with the
// soak tag (make soak). Knobs:
// REINS_SOAK_AGENTS (10), REINS_SOAK_FAULT_EVERY (calls between faults,
// 60), REINS_SOAK_SAMPLE (1m), REINS_SOAK_WARMUP (2m).
func TestSoak(t *testing.T) {
	soak := os.Getenv("REINS_SOAK")
	d, err := time.ParseDuration(soak)
	if err != nil || d <= 0 {
		t.Fatalf("REINS_SOAK=%q: want a duration such as 30m", soak)
	}
	cfg := faultConfig{
		duration: d,
		agents:   envInt(t, "REINS_SOAK_AGENTS", 10),
		every:    envInt(t, "REINS_SOAK_FAULT_EVERY", 60),
		once:     []string{faultCompanion},
		sample:   envDuration(t, "REINS_SOAK_SAMPLE", time.Minute),
		warmup:   envDuration(t, "REINS_SOAK_WARMUP", 2*time.Minute),
	}
	runFaults(t, cfg)
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a duration", name, v)
	}
	return d
}
