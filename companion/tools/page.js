// The engine's helper inside each page. It runs in an isolated world named
// "reins": page scripts cannot see it, fake its refs or patch what it calls.
// Every function answers {ok, href, title} or {err, code, href}.
(() => {
  if (globalThis.__reins) return;

  // ---- refs: an element keeps its ref for as long as it stays in the DOM.
  const refToEl = new Map(); // "ref_N" -> WeakRef(element)
  const elToRef = new WeakMap(); // element -> "ref_N"
  let nextRef = 0;
  const refOf = (el) => {
    let r = elToRef.get(el);
    if (!r) {
      r = 'ref_' + ++nextRef;
      elToRef.set(el, r);
      refToEl.set(r, new WeakRef(el));
    }
    return r;
  };
  const prune = () => {
    if (refToEl.size < 5000) return;
    for (const [r, w] of refToEl) {
      const el = w.deref();
      if (!el || !el.isConnected) refToEl.delete(r);
    }
  };
  class Fail extends Error {
    constructor(code, msg) { super(msg); this.code = code; }
  }
  const byRef = (ref) => {
    if (typeof ref !== 'string' || !/^ref_\d+$/.test(ref)) throw new Fail('bad_params', `"${ref}" is not an element ref (refs look like ref_12 and come from read_page or find)`);
    const w = refToEl.get(ref);
    const el = w && w.deref();
    if (!el || !el.isConnected) {
      throw new Fail('bad_params', `${ref} is stale: its element is no longer on the page (or the page reloaded). Call read_page or find for fresh refs`);
    }
    return el;
  };

  // originOf matches the engine's Go originOf: the TOCTOU guard compares
  // what either side computes.
  const originOf = (href) => {
    try {
      const u = new URL(href);
      const p = u.protocol.slice(0, -1).toLowerCase();
      if (p === 'http' || p === 'https' || p === 'ws' || p === 'wss' || p === 'ftp') return p + '://' + u.host.toLowerCase();
      if (p === 'file') return 'file://';
      return p + ':';
    } catch (e) { return href; }
  };
  // guard refuses in the same task as the action, so nothing can navigate
  // between the check and the change.
  const guard = (expect) => {
    if (expect && originOf(location.href) !== expect) throw new Fail('navigated_away', 'the tab left ' + expect);
  };

  // ---- text helpers
  const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
  const q = (s) => '"' + s.replace(/"/g, '\\"') + '"';

  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'base']);
  const INTERACTIVE = new Set(['button', 'link', 'checkbox', 'radio', 'textbox', 'searchbox', 'combobox', 'listbox',
    'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'slider', 'spinbutton', 'treeitem',
    'file']);
  const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'option', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'treeitem', 'cell', 'columnheader', 'rowheader', 'switch', 'checkbox', 'radio', 'tooltip',
    'legend', 'caption']);
  // Containers worth a line of their own because they tell the agent where it is.
  const LANDMARK = new Set(['navigation', 'main', 'banner', 'contentinfo', 'complementary', 'form', 'dialog',
    'alertdialog', 'search', 'region', 'table', 'list', 'menu', 'menubar', 'tablist', 'tree', 'grid', 'group',
    'radiogroup', 'alert', 'status', 'article', 'figure', 'iframe', 'row']);

  const roleOf = (el) => {
    const explicit = el.getAttribute('role');
    if (explicit) {
      const r = explicit.trim().split(/\s+/)[0];
      if (r && r !== 'presentation' && r !== 'none' && r !== 'generic') return r;
      if (r === 'presentation' || r === 'none') return null;
    }
    const tag = el.localName;
    switch (tag) {
      case 'a': case 'area': return el.hasAttribute('href') ? 'link' : null;
      case 'button': return 'button';
      case 'summary': return 'button';
      case 'input': {
        const t = (el.getAttribute('type') || 'text').toLowerCase();
        if (t === 'hidden') return null;
        if (t === 'button' || t === 'submit' || t === 'reset' || t === 'image') return 'button';
        if (t === 'checkbox') return 'checkbox';
        if (t === 'radio') return 'radio';
        if (t === 'range') return 'slider';
        if (t === 'number') return 'spinbutton';
        if (t === 'search') return 'searchbox';
        if (t === 'file') return 'file';
        if (el.list) return 'combobox';
        return 'textbox';
      }
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'textarea': return 'textbox';
      case 'option': return 'option';
      case 'img': return el.getAttribute('alt') === '' ? null : 'img';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'nav': return 'navigation';
      case 'main': return 'main';
      case 'header': return el.closest('article,section,main,aside,nav') ? null : 'banner';
      case 'footer': return el.closest('article,section,main,aside,nav') ? null : 'contentinfo';
      case 'aside': return 'complementary';
      case 'form': return 'form';
      case 'dialog': return 'dialog';
      case 'table': return 'table';
      case 'tr': return 'row';
      case 'th': return 'columnheader';
      case 'td': return 'cell';
      case 'ul': case 'ol': return 'list';
      case 'li': return 'listitem';
      case 'fieldset': return 'group';
      case 'legend': return 'legend';
      case 'caption': return 'caption';
      case 'figure': return 'figure';
      case 'article': return 'article';
      case 'section': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : null;
      case 'iframe': return 'iframe';
      case 'progress': return 'progressbar';
      case 'meter': return 'meter';
      case 'video': return 'video';
      case 'audio': return 'audio';
      case 'p': return 'paragraph';
      case 'label': return 'label';
    }
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return 'textbox';
    return null;
  };

  const hasPointer = (el) => {
    const cs = getComputedStyle(el);
    if (cs.cursor !== 'pointer') return false;
    const p = el.parentElement;
    return !p || getComputedStyle(p).cursor !== 'pointer';
  };

  const isInteractive = (el, role) => {
    if (role && INTERACTIVE.has(role)) return true;
    if (el.hasAttribute('onclick')) return true;
    const ti = el.getAttribute('tabindex');
    if (ti !== null && +ti >= 0 && role !== 'dialog' && role !== 'main') return true;
    if (!role && (el.localName === 'div' || el.localName === 'span' || el.localName === 'li' || el.localName === 'img' || el.localName === 'svg')) {
      return hasPointer(el);
    }
    return false;
  };

  const visible = (el) => {
    if (el.getAttribute('aria-hidden') === 'true') return false;
    if (el.hidden) return false;
    if (el.checkVisibility) {
      if (el.checkVisibility({ visibilityProperty: true })) return true;
      // display: contents has no box of its own but its children do.
      return getComputedStyle(el).display === 'contents';
    }
    const cs = getComputedStyle(el);
    return cs.display !== 'none' && cs.visibility !== 'hidden';
  };
  const NESTED = 'a[href],button,input,select,textarea,[role],[tabindex],[onclick],[contenteditable]';

  const labelText = (label, control) => {
    let s = '';
    for (const n of label.childNodes) {
      if (n.nodeType === 3) s += n.nodeValue;
      else if (n.nodeType === 1 && n !== control && !n.contains(control) && !(n.matches && n.matches('input,select,textarea,button'))) s += ' ' + n.textContent;
    }
    return clean(s);
  };

  const nameOf = (el, role, inter) => {
    let n = '';
    const lb = el.getAttribute('aria-labelledby');
    if (lb) n = clean(lb.split(/\s+/).map((id) => { const e = document.getElementById(id); return e ? e.textContent : ''; }).join(' '));
    if (!n) n = clean(el.getAttribute('aria-label'));
    if (!n && el.labels && el.labels.length) n = clean([...el.labels].map((l) => labelText(l, el)).join(' '));
    if (!n) {
      const tag = el.localName;
      if (tag === 'img' || (tag === 'input' && el.type === 'image')) n = clean(el.getAttribute('alt'));
      else if (tag === 'input' && (el.type === 'submit' || el.type === 'button' || el.type === 'reset')) n = clean(el.value) || (el.type === 'submit' ? 'Submit' : el.type === 'reset' ? 'Reset' : '');
      else if (tag === 'fieldset') { const lg = el.querySelector(':scope > legend'); if (lg) n = clean(lg.textContent); }
      else if (tag === 'table') { const c = el.querySelector(':scope > caption'); if (c) n = clean(c.textContent); }
      else if (tag === 'iframe') n = clean(el.getAttribute('title'));
    }
    if (!n && (role ? NAME_FROM_CONTENT.has(role) : inter)) n = clean(el.innerText !== undefined ? el.innerText : el.textContent);
    if (!n) n = clean(el.getAttribute('title'));
    if (!n && (role === 'textbox' || role === 'searchbox' || role === 'combobox' || role === 'spinbutton')) n = clean(el.getAttribute('placeholder'));
    return clip(n, 70);
  };

  const shortHref = (a) => {
    const raw = a.getAttribute('href') || '';
    if (raw.startsWith('javascript:')) return '';
    try {
      const u = new URL(a.href);
      if (u.origin === location.origin) return clip(u.pathname + u.search + u.hash, 60);
      return clip(u.href, 60);
    } catch (e) { return clip(raw, 60); }
  };

  const props = (el, role) => {
    const out = [];
    const tag = el.localName;
    if (role === 'heading') out.push('h' + (tag.length === 2 ? tag[1] : (el.getAttribute('aria-level') || '2')));
    if (role === 'link' && tag === 'a') { const h = shortHref(el); if (h) out.push('href=' + h); }
    if (tag === 'input' || tag === 'textarea') {
      const t = (el.getAttribute('type') || (tag === 'textarea' ? 'textarea' : 'text')).toLowerCase();
      if (t !== 'text' && t !== 'textarea' && role !== 'checkbox' && role !== 'radio' && role !== 'button' && role !== 'searchbox' && role !== 'spinbutton' && role !== 'slider') out.push('type=' + t);
      if (role === 'checkbox' || role === 'radio') { if (el.checked) out.push('checked'); }
      else if (role !== 'button' && role !== 'file' && el.value) out.push('value=' + (t === 'password' ? '"••••"' : q(clip(clean(el.value), 40))));
      else if (role === 'file' && el.files && el.files.length) out.push('files=' + [...el.files].map((f) => f.name).join(','));
      const ph = clean(el.getAttribute('placeholder'));
      if (ph && !el.value && nameOf(el, role) !== clip(ph, 70)) out.push('placeholder=' + q(clip(ph, 40)));
    } else if (tag === 'select') {
      const sel = [...el.selectedOptions].map((o) => clip(clean(o.text), 30));
      if (sel.length) out.push('value=' + q(sel.join(', ')));
      const opts = [...el.options].slice(0, 8).map((o) => clip(clean(o.text), 20));
      out.push('options=[' + opts.join('|') + (el.options.length > 8 ? '|…' + el.options.length : '') + ']');
    } else if (role === 'textbox' && el.isContentEditable) {
      const v = clean(el.innerText);
      if (v) out.push('value=' + q(clip(v, 40)));
    }
    const ac = el.getAttribute('aria-checked');
    if (ac && tag !== 'input') out.push(ac === 'true' ? 'checked' : ac === 'mixed' ? 'mixed' : '');
    const ae = el.getAttribute('aria-expanded');
    if (ae) out.push(ae === 'true' ? 'expanded' : 'collapsed');
    const as = el.getAttribute('aria-selected');
    if (as === 'true') out.push('selected');
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') out.push('disabled');
    return out.filter(Boolean);
  };

  // children yields element children, looking into open shadow roots.
  const kids = (el) => {
    const list = [];
    if (el.shadowRoot) for (const c of el.shadowRoot.children) list.push(c);
    for (const c of el.children) list.push(c);
    return list;
  };

  const directText = (el) => {
    let s = '';
    for (const n of el.childNodes) if (n.nodeType === 3) s += n.nodeValue;
    return clean(s);
  };

  // ---- read_page
  const tree = (opts) => {
    prune();
    const interactiveOnly = opts.filter === 'interactive';
    const maxDepth = opts.depth > 0 ? opts.depth : 40;
    const lines = [];
    let visited = 0;
    const LIMIT = 30000;
    const emit = (depth, el, role, name, extra) => {
      let line = (interactiveOnly ? '' : ' '.repeat(depth)) + role;
      if (name) line += ' ' + q(name);
      if (el) line += ' [' + refOf(el) + ']';
      if (extra && extra.length) line += ' ' + extra.join(' ');
      lines.push(line);
    };
    const walk = (el, depth) => {
      if (++visited > LIMIT) return;
      const tag = el.localName;
      if (SKIP.has(tag) || !visible(el)) return;
      const role = roleOf(el);
      const inter = isInteractive(el, role);
      let d = depth;
      if (inter) {
        emit(interactiveOnly ? 0 : depth, el, role || 'clickable', nameOf(el, role, true), props(el, role));
        d++;
        // The name already carries the content of simple controls.
        if (role === 'textbox' && el.isContentEditable) return;
        if (!el.querySelector(NESTED)) return;
      } else if (!interactiveOnly) {
        if (role === 'heading' || role === 'img' || role === 'legend' || role === 'caption') {
          emit(depth, el, role, nameOf(el, role), props(el, role));
          return;
        }
        if (role === 'label' && el.control) {
          // The control's own line carries the label text as its name.
          for (const c of kids(el)) walk(c, depth);
          return;
        }
        if (role && LANDMARK.has(role)) {
          // Plain lists, rows and groups only add lines; they earn one
          // when they carry a name.
          const plain = role === 'list' || role === 'row' || role === 'group';
          const n = plain ? clean(el.getAttribute('aria-label')) : nameOf(el, role);
          if (!plain || n) {
            emit(depth, el, role, n, []);
            d++;
          }
        }
        const t = directText(el);
        if (t) {
          lines.push(' '.repeat(d) + 'text ' + q(clip(t, 100)));
        }
      }
      if (d - depth > 0 && d > maxDepth) return;
      if (tag === 'select' || tag === 'svg') return;
      for (const c of kids(el)) walk(c, d);
    };
    let root = document.body || document.documentElement;
    if (opts.ref) root = byRef(opts.ref);
    if (root) {
      if (opts.ref) walk(root, 0);
      else for (const c of kids(root)) walk(c, 0);
    }
    return {
      lines,
      truncatedWalk: visited > LIMIT,
      vw: innerWidth, vh: innerHeight, sx: Math.round(scrollX), sy: Math.round(scrollY),
      ph: Math.round(document.documentElement.scrollHeight),
    };
  };

  // ---- find
  const SYN = {
    button: ['button'], btn: ['button'], link: ['link'], links: ['link'],
    field: ['textbox', 'searchbox', 'combobox', 'spinbutton'], input: ['textbox', 'searchbox', 'combobox', 'spinbutton', 'checkbox', 'radio', 'file'],
    box: ['textbox', 'searchbox', 'checkbox'], textbox: ['textbox'], search: ['searchbox'], checkbox: ['checkbox'],
    radio: ['radio'], dropdown: ['combobox', 'listbox'], select: ['combobox', 'listbox'], menu: ['menu', 'menuitem', 'combobox'],
    heading: ['heading'], title: ['heading'], image: ['img'], img: ['img'], tab: ['tab'], switch: ['switch'],
    toggle: ['switch', 'checkbox'], upload: ['file'], file: ['file'], textarea: ['textbox'], option: ['option'],
  };
  const STOP = new Set(['the', 'a', 'an', 'to', 'for', 'of', 'on', 'in', 'with', 'and', 'or', 'that', 'this']);
  const find = (query, limit) => {
    prune();
    const qn = clean(query).toLowerCase();
    const tokens = qn.split(/[\s,]+/).filter((t) => t && !STOP.has(t));
    if (!tokens.length) throw new Fail('bad_params', 'query is empty');
    const found = [];
    let visited = 0;
    const consider = (el, role, inter) => {
      const name = nameOf(el, role, inter);
      const hay = [name, el.getAttribute('placeholder'), el.getAttribute('title'), el.getAttribute('aria-label'),
        el.getAttribute('alt'), el.id, el.getAttribute('name'), el.getAttribute('type'),
        (el.localName === 'input' || el.localName === 'textarea') && el.type !== 'password' ? el.value : '',
        inter ? '' : directText(el)].filter(Boolean).join(' ').toLowerCase();
      let matched = 0, score = 0;
      for (const t of tokens) {
        if (hay.includes(t)) { matched++; score += 2; continue; }
        const roles = SYN[t];
        if (roles && role && roles.includes(role)) { matched++; score += 1; continue; }
        if (role && role === t) { matched++; score += 1; }
      }
      if (!matched) return;
      const ln = name.toLowerCase();
      if (ln === qn) score += 6;
      else if (ln && ln.includes(qn)) score += 3;
      if (inter) score += 1;
      found.push({ el, role: role || (inter ? 'clickable' : 'text'), name: name || clip(directText(el), 70), matched, score });
    };
    const walk = (el) => {
      if (++visited > 30000) return;
      if (SKIP.has(el.localName) || !visible(el)) return;
      const role = roleOf(el);
      const inter = isInteractive(el, role);
      if (inter || role === 'heading' || role === 'img' || (role && LANDMARK.has(role) && role !== 'list' && role !== 'row') || directText(el)) {
        consider(el, role, inter);
      }
      if (el.localName === 'select' || el.localName === 'svg') return;
      if (inter && !el.querySelector(NESTED)) return;
      for (const c of kids(el)) walk(c);
    };
    walk(document.body || document.documentElement);
    const full = found.filter((f) => f.matched === tokens.length);
    const pool = full.length ? full : found;
    pool.sort((a, b) => b.score - a.score);
    const out = [];
    for (const f of pool.slice(0, limit)) {
      const r = f.el.getBoundingClientRect();
      out.push({
        ref: refOf(f.el), role: f.role, name: f.name, props: props(f.el, f.role),
        x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, h: r.height,
        inView: r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth && r.width > 0,
      });
    }
    return { matches: out, total: pool.length, partial: !full.length, vw: innerWidth, vh: innerHeight };
  };

  // ---- get_page_text
  const tidy = (s) => (s || '').split('\n').map((l) => l.replace(/[ \t\u00a0]+/g, ' ').trim()).join('\n').replace(/\n{3,}/g, '\n\n').trim();
  const text = () => {
    const body = document.body;
    if (!body) return { main: '', rest: '', title: document.title };
    const main = document.querySelector('main, [role="main"]') || document.querySelector('article');
    const mainText = main ? tidy(main.innerText) : '';
    let rest = tidy(body.innerText);
    if (mainText) {
      const i = rest.indexOf(mainText);
      if (i >= 0) rest = tidy(rest.slice(0, i) + '\n' + rest.slice(i + mainText.length));
    }
    return { main: mainText, rest, title: document.title };
  };

  // ---- geometry and descriptions
  const describe = (el) => {
    if (!el) return '';
    const r = roleOf(el);
    const inter = isInteractive(el, r);
    const role = r || (inter ? 'clickable' : el.localName);
    const n = nameOf(el, r, inter) || clip(clean(el.textContent), 40);
    return role + (n ? ' ' + q(n) : '');
  };
  const center = (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, h: r.height };
  };
  const inView = (r) => r.w > 0 && r.h > 0 && r.x >= 0 && r.y >= 0 && r.x < innerWidth && r.y < innerHeight;

  // resolve scrolls a ref into view and reports its centre in CSS px.
  const resolve = (ref) => {
    const el = byRef(ref);
    let c = center(el);
    if (!inView(c)) {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      c = center(el);
    }
    if (c.w === 0 && c.h === 0) throw new Fail('bad_params', `${ref} (${describe(el)}) has no size on the page; it cannot be clicked`);
    const hit = document.elementFromPoint(c.x, c.y);
    return { x: c.x, y: c.y, desc: describe(el), covered: !!hit && hit !== el && !el.contains(hit) && !hit.contains(el) ? describe(hit) : '' };
  };

  const probe = (x, y) => ({ desc: describe(document.elementFromPoint(x, y)) });

  const scrollTo = (ref) => {
    const el = byRef(ref);
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const c = center(el);
    return { x: c.x, y: c.y, desc: describe(el), sx: Math.round(scrollX), sy: Math.round(scrollY) };
  };

  const viewport = () => ({
    w: innerWidth, h: innerHeight, dpr: devicePixelRatio, sx: scrollX, sy: scrollY,
    vx: visualViewport ? visualViewport.pageLeft : scrollX, vy: visualViewport ? visualViewport.pageTop : scrollY,
  });

  // quiet resolves once the page has settled: a rendered frame, and the
  // tasks queued behind it, passed with the DOM and scroll positions
  // still; or quietMs passed without a change (a hidden tab renders no
  // frames); or maxMs passed whatever happens.
  const quiet = (quietMs, maxMs) => new Promise((resolve) => {
    const start = performance.now();
    let last = start;
    let changed = false;
    let done = false;
    let timer = 0;
    const bump = () => { last = performance.now(); changed = true; };
    const mo = new MutationObserver(bump);
    mo.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    addEventListener('scroll', bump, { capture: true, passive: true });
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      mo.disconnect();
      removeEventListener('scroll', bump, { capture: true });
      resolve({ sx: Math.round(scrollX), sy: Math.round(scrollY) });
    };
    const frame = () => requestAnimationFrame(() => setTimeout(() => {
      if (done) return;
      if (!changed) { finish(); return; }
      changed = false;
      frame();
    }, 0));
    const check = () => {
      const now = performance.now();
      if (now - last >= quietMs || now - start >= maxMs) { finish(); return; }
      timer = setTimeout(check, Math.max(1, Math.min(quietMs - (now - last), maxMs - (now - start))));
    };
    frame();
    timer = setTimeout(check, quietMs);
  });

  // ---- form_input
  const truthy = (v) => v === true || v === 1 || (typeof v === 'string' && /^(true|on|yes|1|checked|check|selected)$/i.test(v.trim()));
  const falsy = (v) => v === false || v === 0 || v === null || (typeof v === 'string' && /^(false|off|no|0|unchecked|uncheck|)$/i.test(v.trim()));
  const fire = (el, type) => el.dispatchEvent(new Event(type, { bubbles: true }));
  const nativeSet = (el, v) => {
    const proto = el.localName === 'textarea' ? HTMLTextAreaElement.prototype : el.localName === 'select' ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, v);
  };
  const setChecked = (el, want) => {
    if (el.checked !== want) {
      el.click();
      if (el.checked !== want) { el.checked = want; fire(el, 'input'); fire(el, 'change'); }
    }
  };
  const formInput = (ref, value, expect) => {
    guard(expect);
    const el = byRef(ref);
    const tag = el.localName;
    const desc = describe(el);
    if (el.disabled) throw new Fail('bad_params', `${ref} (${desc}) is disabled`);
    if (tag === 'select') {
      const wanted = (Array.isArray(value) ? value : [value]).map((v) => String(v).trim().toLowerCase());
      const opts = [...el.options];
      const pick = (w) => opts.find((o) => o.value.toLowerCase() === w) || opts.find((o) => clean(o.text).toLowerCase() === w) || opts.find((o) => clean(o.text).toLowerCase().includes(w));
      const chosen = wanted.map(pick);
      const missing = wanted.filter((w, i) => !chosen[i]);
      if (missing.length) throw new Fail('bad_params', `${ref} (${desc}) has no option ${q(missing[0])}; options: ${opts.slice(0, 20).map((o) => q(clean(o.text))).join(', ')}`);
      if (el.multiple) for (const o of opts) o.selected = chosen.includes(o);
      else nativeSet(el, chosen[0].value);
      fire(el, 'input'); fire(el, 'change');
      return { desc, now: [...el.selectedOptions].map((o) => clean(o.text)).join(', '), kind: 'select' };
    }
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      if (el.type === 'radio' && typeof value === 'string' && !truthy(value) && !falsy(value)) {
        // A value naming another option of the same group selects that option.
        const group = el.name ? [...(el.form || document).querySelectorAll('input[type=radio]')].filter((r) => r.name === el.name) : [el];
        const w = value.trim().toLowerCase();
        const target = group.find((r) => r.value.toLowerCase() === w) || group.find((r) => nameOf(r, 'radio').toLowerCase() === w);
        if (!target) throw new Fail('bad_params', `no radio button ${q(value)} in the group of ${ref}`);
        setChecked(target, true);
        return { desc: describe(target), now: 'checked', kind: 'radio' };
      }
      if (!truthy(value) && !falsy(value)) throw new Fail('bad_params', `${ref} is a ${el.type}: value must be true or false`);
      const want = truthy(value);
      if (el.type === 'radio' && !want) {
        if (el.checked) { el.checked = false; fire(el, 'input'); fire(el, 'change'); }
      } else setChecked(el, want);
      return { desc, now: el.checked ? 'checked' : 'unchecked', kind: el.type };
    }
    if (tag === 'input' && el.type === 'file') throw new Fail('bad_params', `${ref} is a file input; use upload_file (or upload_image for a screenshot)`);
    if (tag === 'input' || tag === 'textarea') {
      const v = value === null || value === undefined ? '' : String(value);
      el.focus();
      nativeSet(el, v);
      el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertReplacementText', data: v }));
      fire(el, 'change');
      if (el.value !== v && el.type !== 'number') throw new Fail('bad_params', `${ref} (${desc}) did not accept the value (it holds ${q(clip(el.value, 40))})`);
      return { desc, now: el.type === 'password' ? `${v.length} characters` : clip(el.value, 80), kind: el.type === 'password' ? 'password' : 'text' };
    }
    if (el.isContentEditable) {
      const v = value === null || value === undefined ? '' : String(value);
      el.focus();
      const sel = getSelection();
      const range = document.createRange();
      range.selectNodeContents(el);
      sel.removeAllRanges();
      sel.addRange(range);
      if (!document.execCommand('insertText', false, v)) {
        el.textContent = v;
        el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText', data: v }));
      }
      return { desc, now: clip(clean(el.innerText), 80), kind: 'contenteditable' };
    }
    const role = roleOf(el);
    if (role === 'checkbox' || role === 'switch' || role === 'radio') {
      const want = truthy(value);
      if ((el.getAttribute('aria-checked') === 'true') !== want) el.click();
      return { desc, now: el.getAttribute('aria-checked') === 'true' ? 'checked' : 'unchecked', kind: role };
    }
    throw new Fail('bad_params', `${ref} (${desc}) is not a form control`);
  };

  // ---- upload_image
  const setFile = (ref, b64, name, mime, expect) => {
    const r = putFiles(ref, [{ data: b64, name, mime }], true, expect);
    return { desc: r.desc, count: r.names.length };
  };

  // ---- files and waits (upload_file, wait_for)
  const fileFrom = (b64, name, mime) => {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new File([bytes], name, { type: mime || 'application/octet-stream', lastModified: Date.now() });
  };
  // fileTarget says what ref is: a file input (which takes files as they
  // are) or anything else (which gets them dropped on it).
  const fileTarget = (ref, expect) => {
    guard(expect);
    const el = byRef(ref);
    const input = el.localName === 'input' && el.type === 'file';
    if (input && el.disabled) throw new Fail('bad_params', `${ref} (${describe(el)}) is disabled`);
    return { desc: describe(el), input, multiple: input && el.multiple };
  };
  const fileNames = (ref) => {
    const el = byRef(ref);
    return { names: el.files ? [...el.files].map((f) => f.name) : [] };
  };
  // putFiles gives a file input files through a DataTransfer, as a person
  // picking them would: input and change fire.
  const putFiles = (ref, files, append, expect) => {
    const t = fileTarget(ref, expect);
    const el = byRef(ref);
    if (!t.input) throw new Fail('bad_params', `${ref} (${t.desc}) is not a file input; drop the files on it instead`);
    if (files.length > 1 && !el.multiple) throw new Fail('bad_params', `${ref} (${t.desc}) takes one file`);
    const dt = new DataTransfer();
    if (append && el.multiple && el.files) for (const f of el.files) dt.items.add(f);
    for (const f of files) dt.items.add(fileFrom(f.data, f.name, f.mime));
    el.files = dt.files;
    fire(el, 'input'); fire(el, 'change');
    return { desc: t.desc, names: [...el.files].map((f) => f.name) };
  };
  // dropMark marks the drop target, ref's element or what is at (x, y),
  // for the engine's drop in the page's own world: Firefox hides files a
  // DataTransfer got from another world from the page's scripts.
  const dropMark = (ref, x, y, token, expect) => {
    guard(expect);
    let target;
    if (ref) {
      target = byRef(ref);
      if (!inView(center(target))) target.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      ({ x, y } = center(target));
    } else {
      target = document.elementFromPoint(x, y);
      if (!target) throw new Fail('bad_params', `nothing on the page at (${Math.round(x)}, ${Math.round(y)})`);
    }
    target.setAttribute('data-reins-drop', token);
    return { desc: describe(target), x, y };
  };

  // waitFor resolves once the condition holds, checking it again on every
  // DOM mutation and on the events that change what is visible without
  // one, or when ms pass. c: {text | selector | ref, state}.
  const shown = (el) => el.isConnected && visible(el) && el.getClientRects().length > 0;
  const waitCheck = (c) => {
    const state = c.state || 'visible';
    if (c.text !== undefined) {
      const want = clean(c.text).toLowerCase();
      const body = document.body ? clean(document.body.innerText).toLowerCase() : '';
      const has = body.includes(want);
      return (state === 'hidden' || state === 'gone') ? !has : has;
    }
    let el = null;
    if (c.selector !== undefined) {
      try { el = document.querySelector(c.selector); } catch (e) { throw new Fail('bad_params', `${q(c.selector)} is not a CSS selector`); }
    } else {
      const w = refToEl.get(c.ref);
      el = w && w.deref();
      if (el && !el.isConnected) el = null;
    }
    switch (state) {
      case 'gone': return !el;
      case 'hidden': return !el || !shown(el);
      case 'enabled': return !!el && shown(el) && !el.disabled && el.getAttribute('aria-disabled') !== 'true' && !el.closest('fieldset:disabled');
      default: return !!el && shown(el);
    }
  };
  const WAKE = ['transitionend', 'animationend', 'scroll', 'resize', 'load', 'input', 'change', 'toggle'];
  const waitFor = (c, ms) => {
    if (c.ref !== undefined && c.state !== 'gone' && c.state !== 'hidden') byRef(c.ref);
    const start = performance.now();
    if (waitCheck(c)) return { met: true, ms: 0 };
    return new Promise((resolve) => {
      let done = false;
      const finish = (met) => {
        if (done) return;
        done = true;
        mo.disconnect();
        clearTimeout(timer);
        for (const ev of WAKE) removeEventListener(ev, check, true);
        resolve({ met, ms: Math.round(performance.now() - start) });
      };
      const check = () => {
        try { if (waitCheck(c)) finish(true); } catch (e) { finish(false); }
      };
      const mo = new MutationObserver(check);
      mo.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      for (const ev of WAKE) addEventListener(ev, check, true);
      const timer = setTimeout(() => finish(false), ms);
    });
  };

  const info = () => ({ title: document.title });

  // ---- storage: the page's own local or session storage. At most
  // STORE_ITEMS keys come back, each value cut at STORE_VALUE characters.
  const STORE_ITEMS = 500, STORE_VALUE = 10000;
  const storage = (area, action, name, value, expect) => {
    if (action !== 'get') guard(expect);
    let st;
    try {
      st = area === 'session' ? sessionStorage : localStorage;
    } catch (e) {
      throw new Fail('unsupported', `this page has no ${area} storage: ${e && e.message || e}`);
    }
    const item = (k) => {
      const v = st.getItem(k);
      return v === null ? null : [k, v.length > STORE_VALUE ? v.slice(0, STORE_VALUE) : v, v.length];
    };
    if (action === 'set') {
      if (!name) throw new Fail('bad_params', 'set needs a name');
      try { st.setItem(name, value); } catch (e) { throw new Fail('bad_params', `could not store ${name}: ${e && e.message || e}`); }
      return { origin: location.origin, items: [item(name)], total: st.length };
    }
    if (action === 'clear') {
      const n = name ? (st.getItem(name) === null ? 0 : 1) : st.length;
      if (name) st.removeItem(name); else st.clear();
      return { origin: location.origin, removed: n, total: st.length };
    }
    const keys = name ? [name] : Array.from({ length: st.length }, (_, i) => st.key(i)).sort();
    const items = keys.slice(0, STORE_ITEMS).map(item).filter((x) => x);
    return { origin: location.origin, items, total: st.length };
  };

  const fns = { tree, find, text, resolve, probe, scrollTo, viewport, quiet, formInput, setFile, info, storage,
    fileTarget, fileNames, putFiles, dropMark, waitFor };

  globalThis.__reins = {
    // element hands the engine the element of a ref as an object (Chromium:
    // DOM.setFileInputFiles takes it by object id).
    element(ref) { return byRef(ref); },
    call(fn, args) {
      const base = () => ({ href: location.href, title: document.title });
      try {
        const v = fns[fn](...args);
        if (v && typeof v.then === 'function') {
          return v.then((ok) => Object.assign(base(), { ok }), (e) => Object.assign(base(), { err: String(e && e.message || e), code: (e && e.code) || 'internal' }));
        }
        return Object.assign(base(), { ok: v });
      } catch (e) {
        return Object.assign(base(), { err: String(e && e.message || e), code: (e && e.code) || 'internal' });
      }
    },
  };
})();
