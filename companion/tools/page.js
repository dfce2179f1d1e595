// The engine's helper inside each page. It runs in an isolated world named
// "reins": page scripts cannot see it, fake its refs or patch what it calls.
// Every function answers {ok, href, title, n} or {err, code, href, n}; n is
// the last ref number this world issued, so the engine can tell a ref that
// was never issued from one whose element went away.
//
// One world serves a document and every same-origin frame and open shadow
// root inside it, which it walks as one tree (the flat tree: shadow content
// where it renders, slotted elements in their slots). A frame it cannot
// enter (another origin, a sandbox) is reported by ref; the engine runs
// another copy of this helper in that frame, whose refs carry the frame's
// number (ref_f2_7), and adds the frame's offset to its coordinates.
// Coordinates are CSS px of this world's top viewport.
(() => {
  if (globalThis.__reins) return;

  class Fail extends Error {
    constructor(code, msg) { super(msg); this.code = code; }
  }

  // ---- refs: an element keeps its ref for as long as it stays in the DOM.
  const refToEl = new Map(); // "ref_N" -> WeakRef(element)
  const elToRef = new WeakMap(); // element -> "ref_N"
  let prefix = ''; // "f3_" in the world of frame 3
  let base = 0; // refs up to base were issued in this frame's earlier documents
  let nextRef = 0;
  const refOf = (el) => {
    let r = elToRef.get(el);
    if (!r) {
      r = 'ref_' + prefix + ++nextRef;
      elToRef.set(el, r);
      refToEl.set(r, new WeakRef(el));
    }
    return r;
  };
  const alive = (el) => !!el && el.isConnected && !!el.ownerDocument.defaultView;
  const prune = () => {
    if (refToEl.size < 5000) return;
    for (const [r, w] of refToEl) if (!alive(w.deref())) refToEl.delete(r);
  };
  const REF = /^ref_(f\d+_)?(\d+)$/;
  const byRef = (ref) => {
    const m = typeof ref === 'string' ? REF.exec(ref) : null;
    if (!m) throw new Fail('bad_params', `"${ref}" is not an element ref (refs look like ref_12 and come from read_page or find)`);
    const w = refToEl.get(ref);
    const el = w && w.deref();
    if (alive(el)) return el;
    if ((m[1] || '') === prefix && +m[2] > nextRef) {
      throw new Fail('bad_params', `${ref} was never issued for this tab: use a ref that read_page or find gave you`);
    }
    throw new Fail('bad_params', `${ref} is stale: the page changed since it was issued (its element was removed or the page reloaded). Call read_page or find for fresh refs`);
  };
  // setup takes the frame's ref prefix and where its numbering stands. The
  // engine sends it with a fresh world's first call: then it answers as fn.
  const setup = (o, fn, ...args) => {
    if (typeof o.prefix !== 'string' || !/^(f\d+_)?$/.test(o.prefix)) throw new Fail('bad_params', 'bad ref prefix');
    prefix = o.prefix;
    base = Math.max(base, o.base | 0);
    nextRef = Math.max(nextRef, base);
    if (fn === undefined) return { prefix };
    if (!Object.hasOwn(fns, fn) || fn === 'setup') throw new Fail('internal', `no helper function ${fn}`);
    return fns[fn](...args);
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
  // The origin of the tab's top page, or null where a frame cannot know it
  // (Firefox has no ancestorOrigins; the engine checks the top page itself).
  const topOrigin = () => {
    if (typeof window === 'undefined' || window.top === window) return originOf(location.href);
    const ao = location.ancestorOrigins;
    return ao && ao.length ? originOf(ao[ao.length - 1]) : null;
  };
  // guard refuses in the same task as the action, so nothing can navigate
  // between the check and the change.
  const guard = (expect) => {
    if (!expect) return;
    const o = topOrigin();
    if (o !== null && o !== expect) throw new Fail('navigated_away', 'the tab left ' + expect);
  };

  // ---- text helpers
  const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
  const q = (s) => '"' + s.replace(/"/g, '\\"') + '"';

  // ---- documents, frames and shadow roots
  const winOf = (el) => (el.ownerDocument && el.ownerDocument.defaultView) || window;
  const styleOf = (el) => winOf(el).getComputedStyle(el);
  const isFrame = (el) => el.localName === 'iframe' || el.localName === 'frame';
  // The document of a frame this world can enter: same origin and loaded.
  const inner = (fe) => {
    try {
      const d = fe.contentDocument;
      return d && d.documentElement ? d : null;
    } catch (e) { return null; }
  };
  // Firefox content scripts see closed shadow roots too.
  const shadowOf = (el) => el.openOrClosedShadowRoot || el.shadowRoot || null;
  // Where a frame's content starts, in its own document's viewport.
  const contentBox = (fe) => {
    const r = fe.getBoundingClientRect();
    const cs = styleOf(fe);
    return { x: r.left + fe.clientLeft + (parseFloat(cs.paddingLeft) || 0), y: r.top + fe.clientTop + (parseFloat(cs.paddingTop) || 0) };
  };
  // The offset of el's document inside this world's top viewport.
  const offsetOf = (el) => {
    let x = 0, y = 0;
    let d = el.ownerDocument;
    for (let i = 0; d && d !== document && i < 16; i++) {
      const w = d.defaultView;
      const fe = w && w.frameElement;
      if (!fe) break;
      const b = contentBox(fe);
      x += b.x; y += b.y;
      d = fe.ownerDocument;
    }
    return { x, y };
  };
  // The flat-tree parent, across shadow roots and into the frame element.
  const flatParent = (el) => {
    if (el.assignedSlot) return el.assignedSlot;
    const p = el.parentNode;
    if (!p) return null;
    if (p.nodeType === 11) return p.host || null;
    if (p.nodeType === 9) { const w = p.defaultView; return (w && w.frameElement) || null; }
    return p;
  };
  const ancestry = (el) => {
    const s = new Set();
    for (let n = flatParent(el), i = 0; n && i < 10000; n = flatParent(n), i++) s.add(n);
    return s;
  };
  const composedContains = (a, b) => {
    for (let n = b, i = 0; n && i < 10000; n = flatParent(n), i++) if (n === a) return true;
    return false;
  };
  // kids yields the element children as they render: a shadow root's
  // children for a host, the assigned elements for a slot, a same-origin
  // frame's body for a frame.
  const kids = (el) => {
    if (isFrame(el)) {
      const d = inner(el);
      return d && d.body ? [...d.body.children] : [];
    }
    if (el.localName === 'slot') {
      const a = el.assignedElements ? el.assignedElements({ flatten: true }) : [];
      return a.length ? a : [...el.children];
    }
    const sr = shadowOf(el);
    return sr ? [...sr.children] : [...el.children];
  };
  // The element at a point, looking into shadow roots and same-origin
  // frames; x, y are also returned in that element's document.
  const deepHit = (x, y) => {
    let el = document.elementFromPoint(x, y);
    let ox = 0, oy = 0;
    for (let i = 0; el && i < 32; i++) {
      const sr = shadowOf(el);
      if (sr && sr.elementFromPoint) {
        const e2 = sr.elementFromPoint(x - ox, y - oy);
        if (e2 && e2 !== el && composedContains(el, e2)) { el = e2; continue; }
      }
      if (isFrame(el)) {
        const d = inner(el);
        if (d) {
          const b = contentBox(el);
          const e2 = d.elementFromPoint(x - ox - b.x, y - oy - b.y);
          if (e2) { ox += b.x; oy += b.y; el = e2; continue; }
        }
      }
      break;
    }
    return { el, x: x - ox, y: y - oy };
  };
  // Firefox names a frame it can script by the id webNavigation uses; the
  // engine's frame ids on Firefox are those ids. Chromium worlds have no
  // such API; the engine asks DevTools instead.
  const frameIdOf = (fe) => {
    try {
      const g = globalThis.browser;
      if (g && g.runtime && typeof g.runtime.getFrameId === 'function') {
        const id = g.runtime.getFrameId(fe);
        return typeof id === 'number' && id > 0 ? String(id) : '';
      }
    } catch (e) { /* not a frame Firefox knows yet */ }
    return '';
  };
  const opaqueFrame = (fe) => ({ ref: refOf(fe), fid: frameIdOf(fe) });

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
      case 'iframe': case 'frame': return 'iframe';
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
    if (styleOf(el).cursor !== 'pointer') return false;
    const p = el.parentElement;
    return !p || styleOf(p).cursor !== 'pointer';
  };

  const isInteractive = (el, role) => {
    if (role && INTERACTIVE.has(role)) return true;
    if (el.hasAttribute('onclick') || el.getAttribute('draggable') === 'true') return true;
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
      return styleOf(el).display === 'contents';
    }
    const cs = styleOf(el);
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

  // contentText is an element's rendered text; innerText leaves out what
  // slots and shadow roots show, so those are read node by node.
  const flatText = (n, depth) => {
    if (n.nodeType === 3) return n.data;
    if (n.nodeType !== 1 || depth > 32 || SKIP.has(n.localName)) return '';
    let list = n.childNodes;
    if (n.localName === 'slot') {
      const a = n.assignedNodes ? n.assignedNodes({ flatten: true }) : [];
      if (a.length) list = a;
    } else if (shadowOf(n)) list = shadowOf(n).childNodes;
    let s = '';
    for (const c of list) s += ' ' + flatText(c, depth + 1);
    return s;
  };
  const contentText = (el) => {
    if (shadowOf(el) || el.querySelector('slot')) return flatText(el, 0);
    return el.innerText !== undefined ? el.innerText : el.textContent;
  };

  const nameOf = (el, role, inter) => {
    let n = '';
    const lb = el.getAttribute('aria-labelledby');
    if (lb) {
      const root = el.getRootNode();
      const scope = root && root.getElementById ? root : el.ownerDocument;
      n = clean(lb.split(/\s+/).map((id) => { const e = scope.getElementById(id); return e ? e.textContent : ''; }).join(' '));
    }
    if (!n) n = clean(el.getAttribute('aria-label'));
    if (!n && el.labels && el.labels.length) n = clean([...el.labels].map((l) => labelText(l, el)).join(' '));
    if (!n) {
      const tag = el.localName;
      if (tag === 'img' || (tag === 'input' && el.type === 'image')) n = clean(el.getAttribute('alt'));
      else if (tag === 'input' && (el.type === 'submit' || el.type === 'button' || el.type === 'reset')) n = clean(el.value) || (el.type === 'submit' ? 'Submit' : el.type === 'reset' ? 'Reset' : '');
      else if (tag === 'fieldset') { const lg = el.querySelector(':scope > legend'); if (lg) n = clean(lg.textContent); }
      else if (tag === 'table') { const c = el.querySelector(':scope > caption'); if (c) n = clean(c.textContent); }
      else if (isFrame(el)) n = clean(el.getAttribute('title')) || clean(el.getAttribute('name'));
    }
    if (!n && (role ? NAME_FROM_CONTENT.has(role) : inter)) n = clean(contentText(el));
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

  const userInvalid = (el) => {
    try { return el.matches(':user-invalid'); } catch (e) { return false; }
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
      if (el.required) out.push('required');
      if (el.willValidate && el.validationMessage && (el.value || userInvalid(el))) out.push('invalid=' + q(clip(clean(el.validationMessage), 60)));
    } else if (tag === 'select') {
      const sel = [...el.selectedOptions].map((o) => clip(clean(o.text), 30));
      if (sel.length) out.push('value=' + q(sel.join(', ')));
      const opts = [...el.options].slice(0, 8).map((o) => clip(clean(o.text), 20));
      out.push('options=[' + opts.join('|') + (el.options.length > 8 ? '|…' + el.options.length : '') + ']');
      if (el.multiple) out.push('multiple');
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
    if (el.getAttribute('aria-invalid') === 'true') out.push('invalid');
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') out.push('disabled');
    if (el.getAttribute('draggable') === 'true') out.push('draggable');
    return out.filter(Boolean);
  };

  const directText = (el) => {
    let s = '';
    for (const n of el.childNodes) if (n.nodeType === 3) s += n.nodeValue;
    return clean(s);
  };

  // ---- read_page
  // A walk of more elements than this stops; the reply says where, and a
  // read from there continues.
  const WALK_LIMIT = 30000;
  // opts: filter, depth, ref (read that subtree), from (start at that
  // element), after (start right after it), indent (depth of the first
  // line), budget (characters of lines at most).
  const tree = (opts) => {
    prune();
    const interactiveOnly = opts.filter === 'interactive';
    const maxDepth = opts.depth > 0 ? opts.depth : 40;
    const indent = opts.indent > 0 ? opts.indent : 0;
    const budget = opts.budget > 0 ? opts.budget : Infinity;
    const lines = [];
    const at = []; // the element each line comes from, to continue from
    const frames = []; // frames this world cannot enter: where their lines go
    let used = 0, visited = 0, next = '', cut = '';
    const from = opts.from ? byRef(opts.from) : null;
    const path = from ? ancestry(from) : null;
    let started = !from;
    const stop = (el, why) => {
      if (!cut) { cut = why; next = refOf(el); }
    };
    const push = (el, line) => {
      if (!started || cut) return;
      // The first line always goes in, so a read continued from here moves on.
      if (used + line.length + 1 > budget && lines.length > 0) { stop(el, 'budget'); return; }
      used += line.length + 1;
      lines.push(line);
      at.push(refOf(el));
    };
    const emit = (depth, el, role, name, extra) => {
      let line = (interactiveOnly ? '' : ' '.repeat(depth)) + role;
      if (name) line += ' ' + q(name);
      line += ' [' + refOf(el) + ']';
      if (extra && extra.length) line += ' ' + extra.join(' ');
      push(el, line);
    };
    const walk = (el, depth) => {
      if (cut) return;
      if (!started) {
        if (el === from) {
          started = true;
          if (opts.after) return;
        } else if (!path.has(el)) return;
      }
      if (started && ++visited > WALK_LIMIT) { stop(el, 'walk'); return; }
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
        if (!el.querySelector(NESTED) && !shadowOf(el)) return;
      } else if (!interactiveOnly) {
        if (role === 'heading' || role === 'img' || role === 'legend' || role === 'caption') {
          emit(depth, el, role, nameOf(el, role), props(el, role));
          return;
        }
        if (role === 'label' && el.control) {
          // The control's own line carries the label text as its name.
          const ctl = el.control;
          for (const c of kids(el)) if (c === ctl || c.contains(ctl) || c.querySelector(NESTED)) walk(c, depth);
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
        if (t) push(el, ' '.repeat(d) + 'text ' + q(clip(t, 100)));
      }
      if (d - depth > 0 && d > maxDepth) return;
      if (isFrame(el) && !inner(el)) {
        if (started && !cut) frames.push(Object.assign(opaqueFrame(el), { pos: lines.length, depth: d }));
        return;
      }
      if (tag === 'select' || tag === 'svg') return;
      for (const c of kids(el)) walk(c, d);
    };
    let root = document.body || document.documentElement;
    if (opts.ref) root = byRef(opts.ref);
    if (root) {
      if (opts.ref) walk(root, indent);
      else for (const c of kids(root)) walk(c, indent);
    }
    const de = document.documentElement;
    return {
      lines, at, frames, next, cut, started,
      vw: innerWidth, vh: innerHeight, sx: Math.round(scrollX), sy: Math.round(scrollY),
      ph: de ? Math.round(de.scrollHeight) : 0,
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
    frame: ['iframe'], iframe: ['iframe'], editor: ['textbox'],
  };
  const STOP = new Set(['the', 'a', 'an', 'to', 'for', 'of', 'on', 'in', 'with', 'and', 'or', 'that', 'this']);
  const find = (query, limit) => {
    prune();
    const qn = clean(query).toLowerCase();
    const tokens = qn.split(/[\s,]+/).filter((t) => t && !STOP.has(t));
    if (!tokens.length) throw new Fail('bad_params', 'query is empty');
    const found = [];
    const frames = [];
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
      const ln = (name || directText(el)).toLowerCase();
      if (ln === qn) score += 6;
      else if (ln && ln.includes(qn)) score += 3;
      if (inter) score += 1;
      found.push({ el, role: role || (inter ? 'clickable' : 'text'), name: name || clip(directText(el), 70), matched, score });
    };
    const walk = (el) => {
      if (++visited > WALK_LIMIT) return;
      if (SKIP.has(el.localName) || !visible(el)) return;
      const role = roleOf(el);
      const inter = isInteractive(el, role);
      if (inter || role === 'heading' || role === 'img' || (role && LANDMARK.has(role) && role !== 'list' && role !== 'row') || directText(el)) {
        consider(el, role, inter);
      }
      if (isFrame(el) && !inner(el)) {
        frames.push(opaqueFrame(el));
        return;
      }
      if (el.localName === 'select' || el.localName === 'svg') return;
      if (inter && !el.querySelector(NESTED) && !shadowOf(el)) return;
      for (const c of kids(el)) walk(c);
    };
    const root = document.body || document.documentElement;
    if (root) for (const c of kids(root)) walk(c);
    const full = found.filter((f) => f.matched === tokens.length);
    const pool = full.length ? full : found;
    pool.sort((a, b) => b.score - a.score);
    const out = [];
    for (const f of pool.slice(0, limit)) {
      const r = centerOf(f.el);
      out.push({
        ref: refOf(f.el), role: f.role, name: f.name, props: props(f.el, f.role), score: f.score,
        x: r.x, y: r.y, w: r.w, h: r.h,
      });
    }
    return { matches: out, total: pool.length, partial: !full.length, frames, vw: innerWidth, vh: innerHeight };
  };

  // ---- get_page_text
  const tidy = (s) => (s || '').split('\n').map((l) => l.replace(/[ \t\u00a0]+/g, ' ').trim()).join('\n').replace(/\n{3,}/g, '\n\n').trim();
  // A frame this world cannot read leaves a marker in the text, which the
  // engine replaces with the frame's own text.
  const MARK = (ref) => '\n\ue000' + ref + '\ue001\n';
  const pageText = (body, opaque) => {
    // innerText leaves out shadow roots and frames: an element above one
    // is read child by child, everything else by innerText.
    const special = new Set();
    const mark = (el) => {
      for (let n = el, i = 0; n && !special.has(n) && i < 10000; n = flatParent(n), i++) special.add(n);
    };
    const scan = (rootNode) => {
      const doc = rootNode.ownerDocument || rootNode;
      const tw = doc.createTreeWalker(rootNode, 1);
      for (let n = tw.nextNode(); n; n = tw.nextNode()) {
        const sr = shadowOf(n);
        if (sr) {
          mark(n);
          // innerText sees no slotted content either.
          for (const slot of sr.querySelectorAll('slot')) mark(slot);
          scan(sr);
        } else if (isFrame(n)) mark(n);
      }
    };
    const out = [];
    const block = (el) => !styleOf(el).display.startsWith('inline');
    const read = (node) => {
      if (node.nodeType === 3) { out.push(node.data.replace(/\s+/g, ' ')); return; }
      if (node.nodeType !== 1) return;
      const el = node;
      if (SKIP.has(el.localName) || !visible(el)) return;
      if (isFrame(el)) {
        const d = inner(el);
        if (d && d.body) { out.push('\n'); scan(d.body); read(d.body); out.push('\n'); } else {
          const f = opaqueFrame(el);
          opaque.push(f);
          out.push(MARK(f.ref));
        }
        return;
      }
      if (!special.has(el) && el.localName !== 'slot') {
        const t = el.innerText;
        if (t) out.push(block(el) ? '\n' + t + '\n' : t);
        return;
      }
      const b = block(el);
      if (b) out.push('\n');
      const sr = shadowOf(el);
      let children = el.childNodes;
      if (el.localName === 'slot') {
        const a = el.assignedNodes ? el.assignedNodes({ flatten: true }) : [];
        if (a.length) children = a;
      } else if (sr) children = sr.childNodes;
      for (const c of children) read(c);
      if (b) out.push('\n');
    };
    scan(body);
    return (el) => { out.length = 0; read(el); return tidy(out.join('')); };
  };
  const text = () => {
    const body = document.body;
    if (!body) return { main: '', rest: '', title: document.title, frames: [] };
    const opaque = [];
    const textOf = pageText(body, opaque);
    const main = document.querySelector('main, [role="main"]') || document.querySelector('article');
    const mainText = main ? textOf(main) : '';
    let rest = textOf(body);
    if (mainText) {
      const i = rest.indexOf(mainText);
      if (i >= 0) rest = tidy(rest.slice(0, i) + '\n' + rest.slice(i + mainText.length));
    }
    const seen = new Set();
    return { main: mainText, rest, title: document.title, frames: opaque.filter((f) => !seen.has(f.ref) && seen.add(f.ref)) };
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
  const rectOf = (el) => {
    const r = el.getBoundingClientRect();
    const o = offsetOf(el);
    return { x: r.left + o.x, y: r.top + o.y, w: r.width, h: r.height };
  };
  const centerOf = (el) => {
    const r = rectOf(el);
    return { x: r.x + r.w / 2, y: r.y + r.h / 2, w: r.w, h: r.h };
  };
  const inView = (c) => c.w > 0 && c.h > 0 && c.x >= 0 && c.y >= 0 && c.x < innerWidth && c.y < innerHeight;
  const reveal = (el) => el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  // painted resolves once the page has drawn a frame or two since a
  // scroll, so the browser routes the next click by where things are now,
  // frames of other processes included; a tab that draws nothing (hidden)
  // stops waiting after PAINT_WAIT ms.
  const PAINT_WAIT = 250;
  const painted = (v) => new Promise((done) => {
    const t = setTimeout(() => done(v), PAINT_WAIT);
    requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(t); done(v); }));
  });

  // resolve scrolls a ref into view and reports its centre.
  const resolve = (ref) => {
    const el = byRef(ref);
    let c = centerOf(el);
    let moved = false;
    if (!inView(c)) {
      reveal(el);
      c = centerOf(el);
      moved = true;
    }
    if (c.w === 0 && c.h === 0) throw new Fail('bad_params', `${ref} (${describe(el)}) has no size on the page; it cannot be clicked`);
    const hit = deepHit(c.x, c.y).el;
    const covered = !!hit && hit !== el && !composedContains(el, hit) && !composedContains(hit, el);
    const out = { x: c.x, y: c.y, w: c.w, h: c.h, desc: describe(el), covered: covered ? describe(hit) : '', vw: innerWidth, vh: innerHeight };
    return moved ? painted(out) : out;
  };

  // box reports an element's box (a frame's content box with content:
  // true), scrolling it into view first with scroll: true when its centre
  // is not in view.
  const box = (ref, o) => {
    const el = byRef(ref);
    const moved = !!(o && o.scroll && !inView(centerOf(el)));
    if (moved) reveal(el);
    const r = rectOf(el);
    let out = { x: r.x, y: r.y, w: r.w, h: r.h, vw: innerWidth, vh: innerHeight, desc: describe(el) };
    if (o && o.content && isFrame(el)) {
      const b = contentBox(el);
      const off = offsetOf(el);
      out = { x: b.x + off.x, y: b.y + off.y, w: el.clientWidth, h: el.clientHeight, vw: innerWidth, vh: innerHeight, desc: describe(el) };
    }
    return moved ? painted(out) : out;
  };

  const probe = (x, y) => {
    const hit = deepHit(x, y).el;
    const out = { desc: describe(hit) };
    if (hit && isFrame(hit) && !inner(hit)) {
      const b = contentBox(hit);
      const o = offsetOf(hit);
      out.frame = Object.assign(opaqueFrame(hit), { ox: b.x + o.x, oy: b.y + o.y });
    }
    return out;
  };

  const scrollTo = (ref) => {
    const el = byRef(ref);
    reveal(el);
    const c = centerOf(el);
    return painted({ x: c.x, y: c.y, desc: describe(el), sx: Math.round(scrollX), sy: Math.round(scrollY) });
  };

  const viewport = () => {
    const de = document.documentElement;
    return {
      w: innerWidth, h: innerHeight, dpr: devicePixelRatio, sx: scrollX, sy: scrollY,
      vx: visualViewport ? visualViewport.pageLeft : scrollX, vy: visualViewport ? visualViewport.pageTop : scrollY,
      pw: Math.max(de ? de.scrollWidth : 0, innerWidth), ph: Math.max(de ? de.scrollHeight : 0, innerHeight),
    };
  };

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
    const w = winOf(el);
    const name = el.localName === 'textarea' ? 'HTMLTextAreaElement' : el.localName === 'select' ? 'HTMLSelectElement' : 'HTMLInputElement';
    const proto = (w[name] || globalThis[name]).prototype;
    Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, v);
  };
  const setChecked = (el, want) => {
    if (el.checked !== want) {
      el.click();
      if (el.checked !== want) { el.checked = want; fire(el, 'input'); fire(el, 'change'); }
    }
  };
  // The element that has focus, through shadow roots and same-origin frames.
  const deepActive = () => {
    let el = document.activeElement;
    for (let i = 0; el && i < 32; i++) {
      const sr = shadowOf(el);
      if (sr && sr.activeElement) { el = sr.activeElement; continue; }
      if (isFrame(el)) { const d = inner(el); if (d && d.activeElement && d.activeElement !== d.body) { el = d.activeElement; continue; } }
      break;
    }
    return el;
  };
  // selectContents focuses an editable element and selects what it holds,
  // so text the engine types next replaces it.
  const selectContents = (el) => {
    el.focus();
    const doc = el.ownerDocument;
    const sel = (el.getRootNode().getSelection && el.getRootNode().getSelection()) || doc.getSelection();
    const range = doc.createRange();
    range.selectNodeContents(el);
    sel.removeAllRanges();
    sel.addRange(range);
    const a = deepActive();
    return a === el || composedContains(el, a);
  };
  const formInput = (ref, value, expect) => {
    guard(expect);
    const el = byRef(ref);
    const tag = el.localName;
    const desc = describe(el);
    if (el.disabled) throw new Fail('bad_params', `${ref} (${desc}) is disabled`);
    if (tag === 'select') {
      const opts = [...el.options];
      let wanted = (Array.isArray(value) ? value : [value]).map((v) => clean(String(v)).toLowerCase());
      const exact = (w) => opts.find((o) => o.value.toLowerCase() === w) || opts.find((o) => clean(o.text).toLowerCase() === w) || opts.find((o) => clean(o.label).toLowerCase() === w);
      const pick = (w) => exact(w) || opts.find((o) => clean(o.text).toLowerCase().includes(w));
      // "Red, Blue" names two options of a multi-select, unless one option is called that.
      if (el.multiple && wanted.length === 1 && wanted[0].includes(',') && !exact(wanted[0])) wanted = wanted[0].split(',').map((w) => w.trim()).filter(Boolean);
      if (!el.multiple && wanted.length > 1) throw new Fail('bad_params', `${ref} (${desc}) takes one option, not ${wanted.length}`);
      const chosen = wanted.map(pick);
      const missing = wanted.filter((w, i) => !chosen[i]);
      if (missing.length) throw new Fail('bad_params', `${ref} (${desc}) has no option ${q(missing[0])}; options: ${opts.slice(0, 20).map((o) => q(clean(o.text))).join(', ')}`);
      const off = chosen.find((o) => o.disabled || (o.parentElement && o.parentElement.localName === 'optgroup' && o.parentElement.disabled));
      if (off) throw new Fail('bad_params', `option ${q(clean(off.text))} of ${ref} (${desc}) is disabled`);
      if (el.multiple) for (const o of opts) o.selected = chosen.includes(o);
      else nativeSet(el, chosen[0].value);
      fire(el, 'input'); fire(el, 'change');
      return { desc, now: [...el.selectedOptions].map((o) => clean(o.text)).join(', '), kind: 'select' };
    }
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      if (el.type === 'radio' && typeof value === 'string' && !truthy(value) && !falsy(value)) {
        // A value naming another option of the same group selects that option.
        const scope = el.form || el.getRootNode();
        const group = el.name ? [...scope.querySelectorAll('input[type=radio]')].filter((r) => r.name === el.name) : [el];
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
      if (el.readOnly) throw new Fail('bad_params', `${ref} (${desc}) is read-only`);
      const v = value === null || value === undefined ? '' : String(value);
      el.focus();
      nativeSet(el, v);
      el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertReplacementText', data: v }));
      fire(el, 'change');
      if (el.value !== v && el.type !== 'number') throw new Fail('bad_params', `${ref} (${desc}) did not accept the value (it holds ${q(clip(el.value, 40))})`);
      return { desc, now: el.type === 'password' ? `${v.length} characters` : clip(el.value, 80), kind: el.type === 'password' ? 'password' : 'text' };
    }
    if (el.isContentEditable) {
      // The engine types the text, so the editor's own input handling runs.
      return { desc, kind: 'type', focused: selectContents(el) };
    }
    const role = roleOf(el);
    if (role === 'checkbox' || role === 'switch' || role === 'radio') {
      const want = truthy(value);
      if ((el.getAttribute('aria-checked') === 'true') !== want) el.click();
      return { desc, now: el.getAttribute('aria-checked') === 'true' ? 'checked' : 'unchecked', kind: role };
    }
    throw new Fail('bad_params', `${ref} (${desc}) is not a form control`);
  };
  // prepareType selects an editable element's contents again after the
  // engine clicked it into focus.
  const prepareType = (ref) => {
    const el = byRef(ref);
    if (!el.isContentEditable) throw new Fail('bad_params', `${ref} is not editable`);
    return { focused: selectContents(el) };
  };
  const valueOf = (ref) => {
    const el = byRef(ref);
    return { now: clip(clean(el.isContentEditable ? el.innerText : el.value || el.textContent), 80) };
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
    // x, y end as the point in the target's own document (frames, shadow
    // roots), where the drop's events carry them.
    let target;
    if (ref) {
      target = byRef(ref);
      if (!inView(centerOf(target))) reveal(target);
      const r = target.getBoundingClientRect();
      x = r.left + r.width / 2; y = r.top + r.height / 2;
    } else {
      const hit = deepHit(x, y);
      target = hit.el; x = hit.x; y = hit.y;
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

  // ---- drag and drop
  const draggableOf = (el) => {
    for (let n = el, i = 0; n && i < 1000; n = flatParent(n), i++) {
      if (n.nodeType === 1 && n.getAttribute('draggable') === 'true') return n;
    }
    return null;
  };
  // dragArm notes whether the next drag gesture starts an HTML5 drag in the
  // source's document, and whether the page cancelled it.
  let dragSeen = null;
  const armed = new WeakSet();
  const dragArm = (ref, x, y) => {
    const el = ref ? byRef(ref) : deepHit(x, y).el;
    if (!el) throw new Fail('bad_params', `nothing on the page at (${Math.round(x)}, ${Math.round(y)})`);
    const w = winOf(el);
    dragSeen = null;
    if (!armed.has(w)) {
      w.addEventListener('dragstart', (e) => { dragSeen = e; }, true);
      armed.add(w);
    }
    return { desc: describe(el) };
  };
  const dragState = () => ({ started: !!dragSeen, prevented: !!(dragSeen && dragSeen.defaultPrevented) });
  // dragDrop plays an HTML5 drag and drop with synthetic DragEvents and one
  // DataTransfer, for browsers where the engine cannot drive a native one.
  // A source that is not draggable answers html5: false, and the engine
  // drags with the mouse instead.
  const dragDrop = (src, dst, x, y, expect) => {
    guard(expect);
    const s = byRef(src);
    const source = draggableOf(s);
    if (!source) return { html5: false };
    let t, tx, ty;
    if (dst) {
      t = byRef(dst);
      const r = t.getBoundingClientRect();
      tx = r.left + r.width / 2; ty = r.top + r.height / 2;
    } else {
      const hit = deepHit(x, y);
      t = hit.el; tx = hit.x; ty = hit.y;
    }
    if (!t) throw new Fail('bad_params', 'nothing to drop on at the target');
    const sr = source.getBoundingClientRect();
    const dt = new DataTransfer();
    const at = (cx, cy) => ({ bubbles: true, cancelable: true, composed: true, clientX: cx, clientY: cy, dataTransfer: dt });
    const sx = sr.left + sr.width / 2, sy = sr.top + sr.height / 2;
    if (!source.dispatchEvent(new DragEvent('dragstart', at(sx, sy)))) return { html5: true, started: false, src: describe(source) };
    source.dispatchEvent(new DragEvent('drag', at(sx, sy)));
    t.dispatchEvent(new DragEvent('dragenter', at(tx, ty)));
    const allowed = !t.dispatchEvent(new DragEvent('dragover', at(tx, ty)));
    let dropped = false;
    if (allowed) dropped = !t.dispatchEvent(new DragEvent('drop', at(tx, ty)));
    else t.dispatchEvent(new DragEvent('dragleave', at(tx, ty)));
    source.dispatchEvent(new DragEvent('dragend', Object.assign(at(tx, ty), { cancelable: false })));
    return { html5: true, started: true, allowed, dropped, src: describe(source), dst: describe(t) };
  };

  // ---- hover
  // hoverRules counts the style rules that change the element at a point,
  // or its ancestors, on :hover: what a hover there would reveal. Sheets of
  // other origins cannot be read and are skipped.
  const hoverRules = (x, y) => {
    const el = deepHit(x, y).el;
    if (!el) return { rules: 0 };
    const chain = [el, ...ancestry(el)].filter((n) => n.nodeType === 1);
    let rules = 0, scanned = 0;
    const visit = (list) => {
      for (const rule of list) {
        if (++scanned > 5000) return;
        if (rule.cssRules && !rule.selectorText) { visit(rule.cssRules); continue; }
        const sel = rule.selectorText;
        if (!sel || !sel.includes(':hover')) continue;
        for (const part of sel.split(',')) {
          if (!part.includes(':hover')) continue;
          const plain = part.split(':hover')[0].trim();
          try {
            if (!plain || chain.some((n) => n.matches(plain))) { rules++; break; }
          } catch (e) { /* a selector this engine cannot test */ }
        }
      }
    };
    const docs = new Set(chain.map((n) => n.getRootNode()));
    for (const d of docs) {
      for (const sheet of [...(d.styleSheets || []), ...(d.adoptedStyleSheets || [])]) {
        let list;
        try { list = sheet.cssRules; } catch (e) { continue; }
        if (list) visit(list);
      }
    }
    return { rules };
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

  const fns = {
    setup, tree, find, text, resolve, box, probe, scrollTo, viewport, quiet, formInput, prepareType, valueOf,
    setFile, fileTarget, fileNames, putFiles, dropMark, waitFor, dragArm, dragState, dragDrop, hoverRules, info, storage,
  };

  globalThis.__reins = {
    // element hands the engine the element of a ref as an object (Chromium:
    // DOM.setFileInputFiles takes it by object id).
    element(ref) { return byRef(ref); },
    call(fn, args) {
      const base = () => ({ href: location.href, title: document.title });
      const done = (o) => Object.assign(o, { n: nextRef });
      try {
        const v = fns[fn](...args);
        if (v && typeof v.then === 'function') {
          return v.then((ok) => done(Object.assign(base(), { ok })), (e) => done(Object.assign(base(), { err: String(e && e.message || e), code: (e && e.code) || 'internal' })));
        }
        return done(Object.assign(base(), { ok: v }));
      } catch (e) {
        return done(Object.assign(base(), { err: String(e && e.message || e), code: (e && e.code) || 'internal' }));
      }
    },
  };
})();
