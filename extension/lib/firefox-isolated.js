// Page side of the Firefox adapter, injected into a tab's isolated world
// (scripting.executeScript files, the content-script sandbox) when it first
// needs it. It dispatches the synthesized input firefox-input.js plans, applies
// the default actions a browser would (focus, caret, typing, form submission,
// scrolling, Tab navigation), measures the viewport and relays console
// records from the MAIN-world hook (firefox-console.js). Page scripts cannot reach this world, so
// they cannot tamper with it; they see only the events it dispatches.
//
// A classic script: executeScript cannot inject modules. It defines
// globalThis.__reinsFx once per document.

(() => {
  if (globalThis.__reinsFx) return;

  const state = { hover: null, down: null, downButton: -1 };
  const deref = (w) => (w ? w.deref() : null);

  // ---- targets

  // Content scripts see closed shadow roots too.
  const shadowOf = (el) => el.openOrClosedShadowRoot || el.shadowRoot || null;

  /** The element at a viewport point, looking into shadow roots and same-origin frames. */
  const deepTarget = (x, y) => {
    let el = document.elementFromPoint(x, y);
    let ox = 0;
    let oy = 0;
    for (let i = 0; el && i < 32; i++) {
      const sr = shadowOf(el);
      if (sr) {
        const inner = sr.elementFromPoint(x - ox, y - oy);
        if (inner && inner !== el) {
          el = inner;
          continue;
        }
      }
      if (el.localName === 'iframe' || el.localName === 'frame') {
        let doc = null;
        try {
          doc = el.contentDocument;
        } catch {
          doc = null;
        }
        if (doc) {
          const r = el.getBoundingClientRect();
          const nx = ox + r.left + el.clientLeft;
          const ny = oy + r.top + el.clientTop;
          const inner = doc.elementFromPoint(x - nx, y - ny);
          if (inner) {
            ox = nx;
            oy = ny;
            el = inner;
            continue;
          }
        }
      }
      break;
    }
    if (!el) el = document.scrollingElement || document.documentElement;
    return { el, x: x - ox, y: y - oy };
  };

  /** The focused element, looking into shadow roots and same-origin frames. */
  const deepActive = () => {
    let el = document.activeElement;
    for (let i = 0; el && i < 32; i++) {
      const sr = shadowOf(el);
      if (sr && sr.activeElement) {
        el = sr.activeElement;
        continue;
      }
      if (el.localName === 'iframe' || el.localName === 'frame') {
        let doc = null;
        try {
          doc = el.contentDocument;
        } catch {
          doc = null;
        }
        if (doc && doc.activeElement) {
          el = doc.activeElement;
          continue;
        }
      }
      break;
    }
    return el || document.body || document.documentElement;
  };

  // ---- frames of other origins: the adapter forwards input to them

  const isFrame = (el) => !!el && (el.localName === 'iframe' || el.localName === 'frame');
  /** A frame whose document this script cannot reach (another origin, a sandbox). */
  const opaque = (el) => {
    if (!isFrame(el)) return false;
    try {
      return !el.contentDocument;
    } catch {
      return true;
    }
  };
  /** The frame's id for scripting.executeScript, or 0 if Firefox has none for it yet. */
  const frameIdOf = (el) => {
    try {
      const id = browser.runtime.getFrameId(el);
      return typeof id === 'number' && id > 0 ? id : 0;
    } catch {
      return 0;
    }
  };
  /** Where the frame's content starts, in its own document's viewport. */
  const contentOrigin = (fe) => {
    const r = fe.getBoundingClientRect();
    const cs = getComputedStyle(fe);
    return { x: r.left + fe.clientLeft + (parseFloat(cs.paddingLeft) || 0), y: r.top + fe.clientTop + (parseFloat(cs.paddingTop) || 0) };
  };
  /** Input for the frame el shows, if this document cannot reach into it. */
  const forwardTo = (el, x, y) => {
    if (!opaque(el)) return null;
    const frameId = frameIdOf(el);
    if (!frameId) return null;
    const o = contentOrigin(el);
    return { frameId, x: x - o.x, y: y - o.y };
  };

  const parentOf = (n) => n.parentNode || (n.host instanceof Element ? n.host : null) || (n.defaultView && n.defaultView.frameElement) || null;

  const ancestors = (el) => {
    const out = [];
    for (let n = el; n && out.length < 1000; n = parentOf(n)) if (n.nodeType === 1) out.push(n);
    return out;
  };

  const commonAncestor = (a, b) => {
    if (!a || !b) return b || a;
    const set = new Set(ancestors(a));
    for (const n of ancestors(b)) if (set.has(n)) return n;
    return b;
  };

  // ---- event construction

  const fire = (target, type, init, Ctor) => {
    const view = (target.ownerDocument && target.ownerDocument.defaultView) || window;
    const ev = new Ctor(type, { ...init, view });
    return target.dispatchEvent(ev);
  };

  const pointerInit = (init, pressed) => ({
    ...init,
    pointerId: 1,
    pointerType: 'mouse',
    isPrimary: true,
    width: 1,
    height: 1,
    pressure: pressed ? 0.5 : 0,
  });

  const nonBubbling = (init) => ({ ...init, bubbles: false, cancelable: false });

  const hoverTo = (el, init) => {
    const prev = deref(state.hover);
    if (prev === el) return;
    const prevLive = prev && prev.isConnected ? prev : null;
    const common = prevLive ? commonAncestor(prevLive, el) : null;
    if (prevLive) {
      fire(prevLive, 'pointerout', pointerInit({ ...init, relatedTarget: el }, init.buttons !== 0), PointerEvent);
      for (const n of ancestors(prevLive)) {
        if (n === common) break;
        fire(n, 'pointerleave', nonBubbling(pointerInit({ ...init, relatedTarget: el }, false)), PointerEvent);
      }
      fire(prevLive, 'mouseout', { ...init, relatedTarget: el }, MouseEvent);
      for (const n of ancestors(prevLive)) {
        if (n === common) break;
        fire(n, 'mouseleave', nonBubbling({ ...init, relatedTarget: el }), MouseEvent);
      }
    }
    const entered = [];
    for (const n of ancestors(el)) {
      if (n === common) break;
      entered.push(n);
    }
    entered.reverse();
    fire(el, 'pointerover', pointerInit({ ...init, relatedTarget: prevLive }, init.buttons !== 0), PointerEvent);
    for (const n of entered) fire(n, 'pointerenter', nonBubbling(pointerInit({ ...init, relatedTarget: prevLive }, false)), PointerEvent);
    fire(el, 'mouseover', { ...init, relatedTarget: prevLive }, MouseEvent);
    for (const n of entered) fire(n, 'mouseenter', nonBubbling({ ...init, relatedTarget: prevLive }), MouseEvent);
    state.hover = new WeakRef(el);
  };

  // ---- focus and selection, the default actions of mousedown

  const FOCUSABLE = 'a[href], area[href], button, input, select, textarea, iframe, summary, [tabindex], [contenteditable]:not([contenteditable="false"]), audio[controls], video[controls]';

  const isFocusable = (el) => {
    if (!(el instanceof Element)) return false;
    if (el.disabled) return false;
    if (el.localName === 'input' && el.type === 'hidden') return false;
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return true;
    return el.matches(FOCUSABLE);
  };

  const focusTargetOf = (el) => {
    for (const n of ancestors(el)) if (isFocusable(n)) return n;
    return null;
  };

  const TEXT_TYPES = new Set(['text', 'search', 'url', 'tel', 'email', 'password', 'number', '']);
  const isTextControl = (el) =>
    el instanceof Element && ((el.localName === 'input' && TEXT_TYPES.has((el.getAttribute('type') || 'text').toLowerCase())) || el.localName === 'textarea');
  const isEditable = (el) => el instanceof Element && !el.disabled && !el.readOnly && (isTextControl(el) || el.isContentEditable);

  const wordBounds = (s, i) => {
    const w = /[\p{L}\p{N}_]/u;
    let a = Math.min(i, s.length);
    let b = a;
    while (a > 0 && w.test(s[a - 1])) a--;
    while (b < s.length && w.test(s[b])) b++;
    if (a === b && b < s.length) b++;
    return [a, b];
  };

  const placeCaret = (t, x, y, clicks) => {
    const doc = t.ownerDocument;
    let pos = null;
    try {
      pos = doc.caretPositionFromPoint ? doc.caretPositionFromPoint(x, y) : null;
    } catch {
      pos = null;
    }
    if (isTextControl(t)) {
      if (t.type === 'number' || t.type === 'email') {
        // These controls have no selection API; focus is all a click does.
        return;
      }
      const len = t.value.length;
      const off = pos && pos.offsetNode === t ? Math.min(pos.offset, len) : len;
      if (clicks >= 3) t.setSelectionRange(0, len);
      else if (clicks === 2) t.setSelectionRange(...wordBounds(t.value, off));
      else t.setSelectionRange(off, off);
      return;
    }
    if (!pos || !pos.offsetNode) return;
    const sel = doc.getSelection();
    if (!sel) return;
    if (clicks >= 3) {
      let block = pos.offsetNode.nodeType === 1 ? pos.offsetNode : pos.offsetNode.parentElement;
      while (block && block.parentElement && getComputedStyle(block).display.startsWith('inline')) block = block.parentElement;
      if (!block) return;
      const r = doc.createRange();
      r.selectNodeContents(block);
      sel.removeAllRanges();
      sel.addRange(r);
      return;
    }
    sel.collapse(pos.offsetNode, pos.offset);
    if (clicks === 2 && typeof sel.modify === 'function') {
      sel.modify('move', 'backward', 'word');
      sel.modify('extend', 'forward', 'word');
    }
  };

  const mouseDownDefault = (t, x, y, clicks) => {
    const target = focusTargetOf(t);
    const doc = t.ownerDocument;
    if (target) {
      if (deepActive() !== target) target.focus();
    } else {
      const a = doc.activeElement;
      if (a && a !== doc.body && typeof a.blur === 'function') a.blur();
    }
    placeCaret(target && isTextControl(target) ? target : t, x, y, clicks);
  };

  // ---- scrolling

  const canScroll = (el, dx, dy) => {
    if (!(el instanceof Element)) return false;
    const cs = getComputedStyle(el);
    const root = el === el.ownerDocument.scrollingElement;
    const oy = root || /(auto|scroll)/.test(cs.overflowY);
    const ox = root || /(auto|scroll)/.test(cs.overflowX);
    if (dy > 0 && oy && el.scrollTop + el.clientHeight < el.scrollHeight - 1) return true;
    if (dy < 0 && oy && el.scrollTop > 0) return true;
    if (dx > 0 && ox && el.scrollLeft + el.clientWidth < el.scrollWidth - 1) return true;
    if (dx < 0 && ox && el.scrollLeft > 0) return true;
    return false;
  };

  const scrollFrom = (el, dx, dy) => {
    for (const n of ancestors(el)) {
      if (canScroll(n, dx, dy)) {
        n.scrollBy({ left: dx, top: dy, behavior: 'instant' });
        return;
      }
    }
    window.scrollBy({ left: dx, top: dy, behavior: 'instant' });
  };

  // ---- mouse

  // linkNavigation is where a click the page let through takes this tab:
  // the http(s) URL of a plain link to another document, else ''. The
  // adapter reports it at once, as Chromium reports an anchor click,
  // because webNavigation tells of the navigation only later.
  const linkNavigation = (el, init) => {
    const a = el.closest && el.closest('a[href], area[href]');
    if (!a || a.hasAttribute('download') || init.button !== 0 || init.ctrlKey || init.metaKey || init.shiftKey || init.altKey) return '';
    const target = (a.getAttribute('target') || '').toLowerCase();
    if (target !== '' && target !== '_self' && target !== '_top' && target !== '_parent') return '';
    let u;
    try {
      u = new URL(a.href);
    } catch {
      return '';
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return '';
    if (u.hash !== '' && u.href.split('#')[0] === location.href.split('#')[0]) return '';
    return u.href;
  };

  const mouse = (plan) => {
    const hit = deepTarget(plan.x, plan.y);
    const t = hit.el;
    const init = { ...plan.init, clientX: hit.x, clientY: hit.y };
    const forward = forwardTo(t, hit.x, hit.y);
    if (forward) {
      // The pointer is over the frame element here; the frame's own
      // document gets the event.
      if (plan.kind === 'move' || plan.kind === 'wheel') hoverTo(t, { ...init, button: 0, detail: 0 });
      return { target: t.localName, forward };
    }
    switch (plan.kind) {
      case 'move': {
        hoverTo(t, init);
        fire(t, 'pointermove', pointerInit(init, init.buttons !== 0), PointerEvent);
        fire(t, 'mousemove', init, MouseEvent);
        return { target: t.localName };
      }
      case 'down': {
        hoverTo(t, { ...init, button: 0, detail: 0 });
        const ok = fire(t, 'pointerdown', pointerInit(init, true), PointerEvent);
        // A cancelled pointerdown suppresses the compatibility mouse
        // events, but not click.
        let allowed = true;
        if (ok) allowed = fire(t, 'mousedown', init, MouseEvent);
        state.down = new WeakRef(t);
        state.downButton = plan.button;
        if (allowed && ok) mouseDownDefault(t, hit.x, hit.y, plan.clickCount);
        if (plan.button === 2) fire(t, 'contextmenu', init, MouseEvent);
        return { target: t.localName };
      }
      case 'up': {
        fire(t, 'pointerup', pointerInit(init, false), PointerEvent);
        fire(t, 'mouseup', init, MouseEvent);
        const down = deref(state.down);
        const clickTarget = down && down.isConnected && state.downButton === plan.button ? commonAncestor(down, t) : t;
        state.down = null;
        state.downButton = -1;
        let nav = '';
        for (const type of plan.after) {
          const Ctor = type === 'click' || type === 'auxclick' ? PointerEvent : MouseEvent;
          const ev = type === 'click' || type === 'auxclick' ? pointerInit(init, false) : init;
          if (fire(clickTarget, type, ev, Ctor) && type === 'click') nav = linkNavigation(clickTarget, init);
        }
        return { target: clickTarget.localName, nav };
      }
      case 'wheel': {
        hoverTo(t, { ...init, button: 0, detail: 0 });
        if (fire(t, 'wheel', init, WheelEvent)) scrollFrom(t, plan.deltaX, plan.deltaY);
        return { target: t.localName };
      }
      default:
        throw new Error('unknown mouse plan ' + plan.kind);
    }
  };

  // ---- keyboard default actions

  const exec = (el, cmd, value) => {
    const doc = el.ownerDocument || document;
    try {
      return doc.execCommand(cmd, false, value);
    } catch {
      return false;
    }
  };

  const insert = (el, text) => {
    if (!isEditable(el)) return false;
    if (exec(el, 'insertText', text)) return true;
    // execCommand refuses some controls; set the value as an edit would.
    if (isTextControl(el)) {
      const start = el.selectionStart ?? el.value.length;
      const end = el.selectionEnd ?? start;
      el.setRangeText(text, start, end, 'end');
      el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText', data: text }));
      return true;
    }
    return false;
  };

  const tabbables = (doc) => {
    const all = [...doc.querySelectorAll(FOCUSABLE)].filter((el) => {
      if (!isFocusable(el)) return false;
      if (el.tabIndex < 0) return false;
      if (el.checkVisibility && !el.checkVisibility({ visibilityProperty: true })) return false;
      return true;
    });
    const positive = all.filter((el) => el.tabIndex > 0).sort((a, b) => a.tabIndex - b.tabIndex);
    return positive.concat(all.filter((el) => el.tabIndex === 0));
  };

  const moveFocus = (from, back) => {
    const doc = (from && from.ownerDocument) || document;
    const list = tabbables(doc);
    if (list.length === 0) return;
    const i = list.indexOf(from);
    let j;
    if (i < 0) j = back ? list.length - 1 : 0;
    else j = (i + (back ? -1 : 1) + list.length) % list.length;
    list[j].focus();
    if (isTextControl(list[j]) && list[j].type !== 'number' && list[j].type !== 'email') list[j].select();
  };

  const implicitSubmit = (el) => {
    const form = el.form;
    if (!form) return;
    const buttons = [...form.elements].filter(
      (b) => (b.localName === 'button' && (b.getAttribute('type') || 'submit').toLowerCase() === 'submit') || (b.localName === 'input' && (b.type === 'submit' || b.type === 'image')),
    );
    const def = buttons[0];
    if (def) {
      if (!def.disabled) def.click();
      return;
    }
    if (typeof form.requestSubmit === 'function') form.requestSubmit();
    else form.submit();
  };

  const activatable = (el) =>
    el instanceof Element &&
    (el.localName === 'button' ||
      el.localName === 'summary' ||
      (el.localName === 'input' && ['button', 'submit', 'reset', 'checkbox', 'radio', 'image', 'file', 'color'].includes(el.type)) ||
      ['button', 'checkbox', 'radio', 'switch', 'menuitem', 'tab', 'link', 'option'].includes(el.getAttribute('role') || ''));

  const pageScroll = (dir) => {
    const vh = window.innerHeight;
    const vw = window.innerWidth;
    const line = 40;
    switch (dir) {
      case 'up':
        return window.scrollBy({ top: -line, behavior: 'instant' });
      case 'down':
        return window.scrollBy({ top: line, behavior: 'instant' });
      case 'left':
        return window.scrollBy({ left: -line, behavior: 'instant' });
      case 'right':
        return window.scrollBy({ left: line, behavior: 'instant' });
      case 'pageup':
        return window.scrollBy({ top: -vh * 0.875, behavior: 'instant' });
      case 'pagedown':
        return window.scrollBy({ top: vh * 0.875, behavior: 'instant' });
      case 'home':
        return window.scrollTo({ top: 0, behavior: 'instant' });
      case 'end':
        return window.scrollTo({ top: document.documentElement.scrollHeight, behavior: 'instant' });
      default:
        return undefined;
    }
  };

  const moveInTextControl = (el, a) => {
    if (el.type === 'number' || el.type === 'email') return;
    const v = el.value;
    const start = el.selectionStart ?? 0;
    const end = el.selectionEnd ?? start;
    const dirBack = el.selectionDirection === 'backward';
    let head = a.extend ? (dirBack ? start : end) : a.dir === 'left' || a.dir === 'up' || a.dir === 'home' || a.dir === 'pageup' ? start : end;
    const anchor = a.extend ? (dirBack ? end : start) : null;
    const lineStart = (i) => v.lastIndexOf('\n', i - 1) + 1;
    const lineEnd = (i) => {
      const n = v.indexOf('\n', i);
      return n < 0 ? v.length : n;
    };
    const collapsed = start === end;
    switch (a.dir) {
      case 'left':
        if (a.word) {
          let i = head;
          while (i > 0 && /\s/.test(v[i - 1])) i--;
          head = wordBounds(v, Math.max(0, i - 1))[0];
        } else if (a.extend || collapsed) head = Math.max(0, head - 1);
        break;
      case 'right':
        if (a.word) {
          let i = head;
          while (i < v.length && /\s/.test(v[i])) i++;
          head = wordBounds(v, i)[1];
        } else if (a.extend || collapsed) head = Math.min(v.length, head + 1);
        break;
      case 'home':
        head = el.localName === 'textarea' ? lineStart(head) : 0;
        break;
      case 'end':
        head = el.localName === 'textarea' ? lineEnd(head) : v.length;
        break;
      case 'up':
      case 'down': {
        if (el.localName !== 'textarea') {
          head = a.dir === 'up' ? 0 : v.length;
          break;
        }
        const col = head - lineStart(head);
        if (a.dir === 'up') {
          const ls = lineStart(head);
          if (ls === 0) head = 0;
          else {
            const ps = lineStart(ls - 1);
            head = Math.min(ps + col, ls - 1);
          }
        } else {
          const le = lineEnd(head);
          if (le >= v.length) head = v.length;
          else {
            const ns = le + 1;
            head = Math.min(ns + col, lineEnd(ns));
          }
        }
        break;
      }
      case 'pageup':
        head = 0;
        break;
      case 'pagedown':
        head = v.length;
        break;
      default:
        return;
    }
    if (a.extend) {
      if (head < anchor) el.setSelectionRange(head, anchor, 'backward');
      else el.setSelectionRange(anchor, head, 'forward');
    } else el.setSelectionRange(head, head);
  };

  const moveInEditable = (el, a) => {
    const sel = el.ownerDocument.getSelection();
    if (!sel || typeof sel.modify !== 'function') return;
    const alter = a.extend ? 'extend' : 'move';
    const map = {
      left: ['backward', a.word ? 'word' : 'character'],
      right: ['forward', a.word ? 'word' : 'character'],
      up: ['backward', 'line'],
      down: ['forward', 'line'],
      home: ['backward', 'lineboundary'],
      end: ['forward', 'lineboundary'],
      pageup: ['backward', 'line'],
      pagedown: ['forward', 'line'],
    };
    const m = map[a.dir];
    if (m) sel.modify(alter, m[0], m[1]);
  };

  const selectStep = (el, back) => {
    const n = el.options.length;
    if (n === 0) return;
    const next = Math.max(0, Math.min(n - 1, el.selectedIndex + (back ? -1 : 1)));
    if (next === el.selectedIndex) return;
    el.selectedIndex = next;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  };

  const applyKey = (el, a) => {
    switch (a.kind) {
      case 'insert':
        insert(el, a.text);
        return;
      case 'space':
        if (isEditable(el)) insert(el, ' ');
        else if (!activatable(el)) pageScroll('pagedown');
        return;
      case 'spaceUp':
        if (activatable(el) && !isEditable(el)) el.click();
        return;
      case 'enter':
        if (el.localName === 'textarea') insert(el, '\n');
        else if (el.isContentEditable) exec(el, a.shift ? 'insertLineBreak' : 'insertParagraph');
        else if (isTextControl(el) || (el.localName === 'input' && el.form)) implicitSubmit(el);
        else if ((el.localName === 'a' && el.hasAttribute('href')) || activatable(el)) el.click();
        return;
      case 'delete':
        if (!isEditable(el)) return;
        if (a.word) {
          if (isTextControl(el)) moveInTextControl(el, { dir: a.dir === 'backward' ? 'left' : 'right', word: true, extend: true });
          else moveInEditable(el, { dir: a.dir === 'backward' ? 'left' : 'right', word: true, extend: true });
        }
        if (!exec(el, a.dir === 'backward' ? 'delete' : 'forwardDelete') && isTextControl(el)) {
          const s = el.selectionStart ?? 0;
          const e = el.selectionEnd ?? s;
          const from = s !== e ? s : a.dir === 'backward' ? Math.max(0, s - 1) : s;
          const to = s !== e ? e : a.dir === 'backward' ? s : Math.min(el.value.length, s + 1);
          el.setRangeText('', from, to, 'end');
          el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: a.dir === 'backward' ? 'deleteContentBackward' : 'deleteContentForward' }));
        }
        return;
      case 'tab':
        moveFocus(el, a.back);
        return;
      case 'move':
        if (isTextControl(el)) moveInTextControl(el, a);
        else if (el.isContentEditable) moveInEditable(el, a);
        else if (el.localName === 'select' && (a.dir === 'up' || a.dir === 'down')) selectStep(el, a.dir === 'up');
        else pageScroll(a.dir);
        return;
      case 'selectAll':
        if (isTextControl(el)) el.select();
        else exec(el, 'selectAll');
        return;
      case 'undo':
      case 'redo':
        exec(el, a.kind);
        return;
      default:
    }
  };

  const key = (plan) => {
    const el = deepActive();
    const forward = forwardTo(el, 0, 0);
    if (forward) return { target: el.localName, forward };
    let go = true;
    for (const ev of plan.events) {
      // A cancelled keydown cancels the keypress and the default action.
      if (!go && ev.type === 'keypress') continue;
      const ok = fire(el, ev.type, ev.init, KeyboardEvent);
      if (!ok && ev.type !== 'keyup') go = false;
    }
    // The handlers may have moved focus; the action applies where focus is now.
    if (go) applyKey(deepActive(), plan.action);
    return { target: el.localName, defaultPrevented: !go };
  };

  const insertText = (text) => {
    const el = deepActive();
    const forward = forwardTo(el, 0, 0);
    if (forward) return { target: el.localName, forward };
    return { inserted: insert(el, text), target: el.localName };
  };

  // ---- measurements

  const layout = () => {
    const de = document.documentElement;
    const vv = window.visualViewport;
    return {
      w: window.innerWidth,
      h: window.innerHeight,
      cw: de ? de.clientWidth : window.innerWidth,
      ch: de ? de.clientHeight : window.innerHeight,
      sx: window.scrollX,
      sy: window.scrollY,
      dpr: window.devicePixelRatio || 1,
      vv: vv
        ? { x: vv.offsetLeft, y: vv.offsetTop, px: vv.pageLeft, py: vv.pageTop, w: vv.width, h: vv.height, scale: vv.scale }
        : { x: 0, y: 0, px: window.scrollX, py: window.scrollY, w: window.innerWidth, h: window.innerHeight, scale: 1 },
      contentW: de ? Math.max(de.scrollWidth, window.innerWidth) : window.innerWidth,
      contentH: de ? Math.max(de.scrollHeight, window.innerHeight) : window.innerHeight,
    };
  };

  // ---- console relay: forwards the MAIN-world hook's records (firefox-console.js)

  const forwarded = new Map(); // hook id → last seq sent, as the hook replays its buffer
  window.addEventListener('reins:console', (e) => {
    let rec;
    try {
      rec = JSON.parse(e.detail);
    } catch {
      return;
    }
    if (!rec || typeof rec !== 'object' || typeof rec.hook !== 'string' || !Number.isInteger(rec.seq)) return;
    if ((forwarded.get(rec.hook) ?? 0) >= rec.seq) return;
    forwarded.set(rec.hook, rec.seq);
    try {
      browser.runtime.sendMessage({ reinsFirefoxPage: rec }).catch(() => {});
    } catch {
      // the extension was reloaded; this copy is orphaned
    }
  });
  // A hook that ran before this relay kept what the page logged meanwhile.
  window.dispatchEvent(new CustomEvent('reins:console-flush'));
  const installRelay = () => 'installed';

  globalThis.__reinsFx = { mouse, key, insertText, layout, installRelay };
})();
