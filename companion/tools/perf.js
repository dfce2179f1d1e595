// The devtools tool's performance trace, run in an isolated world of its
// own (page scripts cannot see or fake it). "start" marks the time in the
// current document; "load" runs at the start of every document loaded while
// the trace is on, so that document is measured from its beginning. Both
// observe interactions down to 16 ms and long tasks as they happen. "stop"
// reads those and what the page's performance timeline buffered (LCP,
// layout shifts), and returns the raw numbers for the engine to summarise.
// In a visible page it first lets the browser report what is still on its
// way: a first contentful paint, and the timing of an input the page has
// seen (the browser reports an interaction only once the frame after it is
// on screen). It waits ten frames or a second at most.
function (action) {
  const g = globalThis;
  const MAX = 2000;
  const INPUTS = ['pointerdown', 'pointerup', 'click', 'keydown', 'keyup'];
  if (action === 'start' || action === 'load') {
    if (g.__reinsPerf) {
      for (const [o] of g.__reinsPerf.obs) o.disconnect();
      for (const t of INPUTS) g.removeEventListener(t, g.__reinsPerf.onInput, true);
    }
    const st = { t0: action === 'load' ? 0 : performance.now(), origin: performance.timeOrigin, load: action === 'load', events: [], tasks: [], obs: [], input: 0, seen: 0 };
    // The last input the person or an agent gave the page, and the start of
    // the last interaction the browser has reported.
    st.onInput = (e) => { if (e.isTrusted) st.input = Math.max(st.input, e.timeStamp); };
    for (const t of INPUTS) g.addEventListener(t, st.onInput, { capture: true, passive: true });
    const watch = (type, opts, keep) => {
      try {
        const po = new PerformanceObserver((list) => { for (const e of list.getEntries()) keep(e); });
        po.observe(Object.assign({ type, buffered: true }, opts));
        st.obs.push([po, keep]);
      } catch (e) { /* not in this browser */ }
    };
    watch('event', { durationThreshold: 16 }, (e) => {
      if (!e.interactionId) return;
      st.seen = Math.max(st.seen, e.startTime);
      if (st.events.length < MAX) st.events.push([e.interactionId, e.duration, e.startTime, e.name]);
    });
    watch('longtask', {}, (e) => { if (st.tasks.length < MAX) st.tasks.push([e.startTime, e.duration]); });
    g.__reinsPerf = st;
    return JSON.stringify({ url: location.href });
  }
  if (action === 'stop' && document.visibilityState === 'visible' && !settled()) return settle().then(report);
  return report();

  function traced() {
    return g.__reinsPerf && g.__reinsPerf.origin === performance.timeOrigin ? g.__reinsPerf : null;
  }
  // flush hands the observers' queued entries to what keeps them.
  function flush(st) {
    if (st) for (const [o, keep] of st.obs) for (const e of o.takeRecords()) keep(e);
  }
  // settled: the page has reported a contentful paint, and an interaction
  // for its last input.
  function settled() {
    const st = traced();
    flush(st);
    return painted() && !(st && st.input > st.seen);
  }

  function painted() {
    const type = 'largest-contentful-paint';
    if (!PerformanceObserver.supportedEntryTypes.includes(type)) return true;
    const po = new PerformanceObserver(() => {});
    po.observe({ type, buffered: true });
    const n = po.takeRecords().length;
    po.disconnect();
    return n > 0;
  }
  function settle() {
    return new Promise((done) => {
      const timer = setTimeout(finish, 1000);
      let frames = 0;
      function finish() { clearTimeout(timer); done(); }
      const frame = () => { if (++frames >= 10 || settled()) finish(); else requestAnimationFrame(frame); };
      requestAnimationFrame(frame);
    });
  }

  function report() {
    const st = traced();
    flush(st);
    const t0 = st ? st.t0 : 0;
    const take = (type) => {
      try {
        if (!PerformanceObserver.supportedEntryTypes.includes(type)) return null;
        const po = new PerformanceObserver(() => {});
        po.observe({ type, buffered: true });
        const r = po.takeRecords();
        po.disconnect();
        return r;
      } catch (e) { return null; }
    };
    const name = (el) => {
      if (!el) return '';
      let s = el.localName || '';
      if (el.id) s += '#' + el.id;
      else if (typeof el.className === 'string' && el.className.trim()) s += '.' + el.className.trim().split(/\s+/).slice(0, 2).join('.');
      return s;
    };
    const out = { url: location.href, started: !!st, load: !!(st && st.load), elapsed: performance.now() - t0, supported: PerformanceObserver.supportedEntryTypes };
    const lcp = take('largest-contentful-paint');
    if (lcp && lcp.length) {
      const e = lcp[lcp.length - 1];
      out.lcp = { t: e.startTime, size: e.size, el: name(e.element), url: (e.url || '').slice(0, 200), before: e.startTime < t0 };
    }
    const shifts = take('layout-shift');
    if (shifts) {
      // CLS: the largest session window (shifts under 1 s apart, 5 s at most).
      let best = 0, cur = 0, first = 0, last = 0, n = 0;
      for (const e of shifts) {
        if (e.hadRecentInput || e.startTime < t0) continue;
        n++;
        if (cur && e.startTime - last < 1000 && e.startTime - first < 5000) cur += e.value;
        else { cur = e.value; first = e.startTime; }
        last = e.startTime;
        if (cur > best) best = cur;
      }
      out.cls = { value: best, shifts: n };
    }
    const events = take('event');
    if (events) {
      const worst = new Map();
      const add = (id, d, t, nm) => {
        if (!id || t < t0) return;
        const w = worst.get(id);
        if (!w || d > w[0]) worst.set(id, [d, nm]);
      };
      for (const e of events) add(e.interactionId, e.duration, e.startTime, e.name);
      if (st) for (const [id, d, t, nm] of st.events) add(id, d, t, nm);
      const all = [...worst.values()].sort((a, b) => b[0] - a[0]);
      // INP: the worst interaction, or the 98th percentile from 50 on.
      const pick = all[Math.min(all.length - 1, Math.floor(all.length / 50))];
      out.inp = { count: all.length, value: pick ? pick[0] : 0, name: pick ? pick[1] : '', observed: !!st };
    }
    const tasks = st ? st.tasks : (take('longtask') || []).map((e) => [e.startTime, e.duration]);
    if (PerformanceObserver.supportedEntryTypes.includes('longtask')) {
      let total = 0, blocking = 0, longest = 0, n = 0;
      const seen = new Set();
      for (const [t, d] of tasks) {
        if (t < t0 || seen.has(t)) continue;
        seen.add(t);
        n++; total += d; blocking += Math.max(0, d - 50); longest = Math.max(longest, d);
      }
      out.tasks = { count: n, total, blocking, longest };
    }
    return JSON.stringify(out);
  }
}
