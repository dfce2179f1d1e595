package tools

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/wire"
)

// emulate makes one tab look like another device or place to its page:
// viewport and touch, colour scheme, position, network and CPU speed. It
// lasts until reset; the browser drops it when the debugger detaches from
// an idle tab, so the engine puts it back before its next command there.

type device struct {
	width, height int
	scale         float64
	mobile        bool
	ua            string
}

// devices is the small table of presets an agent can name.
var devices = map[string]device{
	"iphone":  {393, 852, 3, true, "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"},
	"pixel":   {412, 915, 2.625, true, "Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36"},
	"ipad":    {820, 1180, 2, true, "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"},
	"desktop": {1920, 1080, 1, false, ""},
}

// throttle is a network preset, as the DevTools network panel defines it.
type throttle struct {
	latency  float64 // ms
	down, up float64 // bytes per second
}

var networks = map[string]throttle{
	"slow-3g": {2000, 50_000, 50_000},
	"fast-3g": {562.5, 180_000, 84_375},
	"4g":      {165, 1_012_500, 1_012_500},
}

// maxCPUThrottling bounds the CPU slow-down factor.
const maxCPUThrottling = 20

type emulateArgs struct {
	TabID    int     `json:"tabId" jsonschema:"tab id"`
	Device   string  `json:"device,omitempty" jsonschema:"viewport, touch and user agent"`
	Color    string  `json:"colorScheme,omitempty" jsonschema:"prefers-color-scheme"`
	Network  string  `json:"network,omitempty" jsonschema:"speed or offline"`
	CPU      float64 `json:"cpu,omitempty" jsonschema:"slow-down factor"`
	Position string  `json:"position,omitempty" jsonschema:"latitude,longitude"`
	Reset    bool    `json:"reset,omitempty" jsonschema:"end all emulation first"`
}

// geoAccuracy is the accuracy, in metres, of an emulated position.
const geoAccuracy = 50

type geolocation struct{ Latitude, Longitude, Accuracy float64 }

// emulation is what is in force on a tab.
type emulation struct {
	device      string
	colorScheme string
	geo         *geolocation
	offline     bool
	network     string
	cpu         float64
}

func (em *emulation) zero() bool {
	return em.device == "" && em.colorScheme == "" && em.geo == nil && !em.offline && em.network == "" && em.cpu <= 1
}

func (em *emulation) String() string {
	var parts []string
	if em.device != "" {
		d := devices[em.device]
		parts = append(parts, fmt.Sprintf("device %s (%d×%d)", em.device, d.width, d.height))
	}
	if em.colorScheme != "" {
		parts = append(parts, "colour scheme "+em.colorScheme)
	}
	if em.geo != nil {
		parts = append(parts, fmt.Sprintf("position %.5f, %.5f", em.geo.Latitude, em.geo.Longitude))
	}
	if em.offline {
		parts = append(parts, "offline")
	} else if em.network != "" {
		parts = append(parts, "network "+em.network)
	}
	if em.cpu > 1 {
		parts = append(parts, fmt.Sprintf("CPU %g× slower", em.cpu))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func registerEmulate(e *Engine) {
	define(e, Info{
		Name:        "emulate",
		Description: "Test a tab's page as on a phone or tablet, in dark mode, at a position, on a slow or offline network or CPU (Chromium). Settings add up until reset.",
		Mutating:    true, Batchable: true, Extended: true,
	}, func(s *jsonschema.Schema) {
		names := make([]string, 0, len(devices))
		for n := range devices {
			names = append(names, n)
		}
		slices.Sort(names)
		enum(s, "device", names...)
		enum(s, "colorScheme", "light", "dark")
		enum(s, "network", "offline", "slow-3g", "fast-3g", "4g")
		bounds(s, "cpu", 1, maxCPUThrottling)
	}, runEmulate)
}

func runEmulate(ctx context.Context, c *call, in *emulateArgs) (*Result, error) {
	ts, t, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	if t.BrowserEngine == wire.EngineFirefox {
		return nil, wire.Errorf(wire.CodeUnsupported, "emulation needs Chromium: Firefox lets extensions change neither a tab's viewport, media features, position nor network speed")
	}
	ts.mu.Lock()
	var old emulation
	if ts.emulation != nil {
		old = *ts.emulation
	}
	ts.mu.Unlock()
	now := old
	if in.Reset {
		now = emulation{}
	}
	if in.Device != "" {
		now.device = in.Device
	}
	if in.Color != "" {
		now.colorScheme = in.Color
	}
	if in.Position != "" {
		g, err := parsePosition(in.Position)
		if err != nil {
			return nil, err
		}
		now.geo = g
	}
	switch in.Network {
	case "":
	case "offline":
		now.offline, now.network = true, ""
	default:
		now.offline, now.network = false, in.Network
	}
	if in.CPU != 0 {
		now.cpu = in.CPU
	}
	if err := ts.emulate(ctx, c.s.Label, old, now); err != nil {
		return nil, err
	}
	c.s.forgetView(in.TabID)
	if now.zero() {
		return textResult(fmt.Sprintf("Tab %d is no longer emulating anything.", in.TabID)), nil
	}
	return textResult(fmt.Sprintf("Tab %d now emulates %s.", in.TabID, now.String())), nil
}

// emulate moves the tab from the emulation old to em, sending only the
// parts that differ, so a part the agent did not touch (a viewport
// resize_window set, say) stays as it is. It records em, so ensure can put
// it back after the debugger detached (from old = nothing).
func (ts *tabState) emulate(ctx context.Context, agent string, old, em emulation) error {
	type step struct {
		method string
		params any
	}
	var steps []step
	if em.colorScheme != old.colorScheme {
		features := []map[string]string{}
		if em.colorScheme != "" {
			features = append(features, map[string]string{"name": "prefers-color-scheme", "value": em.colorScheme})
		}
		steps = append(steps, step{"Emulation.setEmulatedMedia", map[string]any{"features": features}})
	}
	if em.device != old.device {
		d := devices[em.device]
		steps = append(steps,
			step{"Emulation.setTouchEmulationEnabled", map[string]any{"enabled": d.mobile, "maxTouchPoints": 5}},
			step{"Emulation.setUserAgentOverride", map[string]any{"userAgent": d.ua}},
		)
		if em.device != "" {
			steps = append(steps, step{"Emulation.setDeviceMetricsOverride", map[string]any{
				"width": d.width, "height": d.height, "deviceScaleFactor": d.scale, "mobile": d.mobile,
			}})
		} else {
			steps = append(steps, step{"Emulation.clearDeviceMetricsOverride", nil})
		}
	}
	if max(em.cpu, 1) != max(old.cpu, 1) {
		steps = append(steps, step{"Emulation.setCPUThrottlingRate", map[string]any{"rate": max(em.cpu, 1)}})
	}
	if em.offline != old.offline || em.network != old.network {
		net := networks[em.network]
		steps = append(steps, step{"Network.emulateNetworkConditions", map[string]any{
			"offline": em.offline, "latency": net.latency, "downloadThroughput": orNoLimit(net.down), "uploadThroughput": orNoLimit(net.up),
		}})
	}
	if em.geo != old.geo && (em.geo == nil || old.geo == nil || *em.geo != *old.geo) {
		if em.geo != nil {
			steps = append(steps, step{"Emulation.setGeolocationOverride", map[string]any{
				"latitude": em.geo.Latitude, "longitude": em.geo.Longitude, "accuracy": em.geo.Accuracy,
			}})
		} else {
			steps = append(steps, step{"Emulation.clearGeolocationOverride", nil})
		}
	}
	for _, s := range steps {
		if _, err := ts.e.hub.CDP(ctx, ts.id, s.method, s.params, "", agent); err != nil {
			return fmt.Errorf("emulating on tab %d (%s): %w", ts.id, s.method, err)
		}
	}
	ts.mu.Lock()
	if em.zero() {
		ts.emulation = nil
	} else {
		ts.emulation = &em
	}
	ts.mu.Unlock()
	return nil
}

// parsePosition reads "latitude,longitude" in degrees.
func parsePosition(s string) (*geolocation, error) {
	lat, lon, ok := strings.Cut(s, ",")
	la, err1 := strconv.ParseFloat(strings.TrimSpace(lat), 64)
	lo, err2 := strconv.ParseFloat(strings.TrimSpace(lon), 64)
	if !ok || err1 != nil || err2 != nil || la < -90 || la > 90 || lo < -180 || lo > 180 {
		return nil, wire.Errorf(wire.CodeBadParams, "position must be latitude,longitude in degrees, e.g. 38.7223,-9.1393")
	}
	return &geolocation{Latitude: la, Longitude: lo, Accuracy: geoAccuracy}, nil
}

// orNoLimit is a throughput for Network.emulateNetworkConditions: -1 turns
// its throttling off.
func orNoLimit(v float64) float64 {
	if v == 0 {
		return -1
	}
	return v
}
