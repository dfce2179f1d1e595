package desktoptest

import (
	"fmt"
	"testing"
)

var trayRSS float64

// BenchmarkTrayIdleRSS is the tray app row of make bench's speed table: the
// real GUI binary under Xvfb with a panel that hosts its icon, idle with
// the dashboard closed. It starts a display, a bus and the app, so it lives
// here rather than in the companion's benchmarks.
func BenchmarkTrayIdleRSS(b *testing.B) {
	// One app per run: the testing package calls a benchmark again while
	// it sizes b.N.
	if trayRSS > 0 {
		b.ReportMetric(trayRSS, "rss-MiB")
		return
	}
	d := newDesktop(b)
	pnl := newPanel(b, d.bus)
	p, _, _ := d.startSetUp(b)
	p.waitMCP()
	pnl.waitItem(b)
	p.waitLog("tray app ready")
	for range b.N {
	}
	rss := float64(p.rssKiB()) / 1024
	trayRSS = rss
	b.ReportMetric(rss, "rss-MiB")
	verdict := "pass"
	if rss > 100 {
		verdict = "MISS"
	}
	fmt.Printf("%-36s %12s %14s %10s  %s\n", "tray app idle RSS", fmt.Sprintf("%.1f MiB", rss), "—", "≤ 100 MiB", verdict)
	mem := p.memory()
	fmt.Printf("  resident by mapping (KiB): %v\n", mem)
}
