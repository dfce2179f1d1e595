// Input for the Firefox adapter: Input.dispatchMouseEvent and
// Input.dispatchKeyEvent parameters turned into plans of DOM events that
// firefox-isolated.js dispatches in the page. Firefox gives extensions no
// way to send real input, so the events are synthesized; everything here is
// pure so the parameters can be tested without a browser.

// CDP modifier bits.
export const MOD_ALT = 1;
export const MOD_CTRL = 2;
export const MOD_META = 4;
export const MOD_SHIFT = 8;

/** DOM MouseEvent.button for a CDP button name. */
const buttonIndex = { left: 0, middle: 1, right: 2, back: 3, forward: 4 };
/** DOM MouseEvent.buttons bit for a CDP button name. */
const buttonBit = { left: 1, right: 2, middle: 4, back: 8, forward: 16 };

export function modifierFlags(mods) {
  const m = Number.isInteger(mods) ? mods : 0;
  return {
    altKey: (m & MOD_ALT) !== 0,
    ctrlKey: (m & MOD_CTRL) !== 0,
    metaKey: (m & MOD_META) !== 0,
    shiftKey: (m & MOD_SHIFT) !== 0,
  };
}

function finite(v, name) {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${name} must be a number`);
  return v;
}

/**
 * The plan for one Input.dispatchMouseEvent.
 * @returns {{kind:'move'|'down'|'up'|'wheel', x:number, y:number, init:object,
 *   clickCount:number, button:number, deltaX?:number, deltaY?:number}}
 */
export function mousePlan(p) {
  const x = finite(p.x, 'x');
  const y = finite(p.y, 'y');
  const name = typeof p.button === 'string' ? p.button : 'none';
  const button = buttonIndex[name] ?? 0;
  const kinds = { mouseMoved: 'move', mousePressed: 'down', mouseReleased: 'up', mouseWheel: 'wheel' };
  const kind = kinds[p.type];
  if (!kind) throw new TypeError(`unsupported mouse event type ${JSON.stringify(p.type)}`);
  let buttons;
  if (Number.isInteger(p.buttons)) buttons = p.buttons;
  else if (kind === 'down') buttons = buttonBit[name] ?? 0;
  else buttons = 0;
  const clickCount = Number.isInteger(p.clickCount) && p.clickCount > 0 ? p.clickCount : kind === 'down' || kind === 'up' ? 1 : 0;
  const init = {
    bubbles: true,
    cancelable: true,
    composed: true,
    clientX: x,
    clientY: y,
    screenX: x,
    screenY: y,
    button: kind === 'down' || kind === 'up' ? button : 0,
    buttons,
    detail: kind === 'down' || kind === 'up' ? clickCount : 0,
    ...modifierFlags(p.modifiers),
  };
  const plan = { kind, x, y, init, clickCount, button };
  if (kind === 'wheel') {
    plan.deltaX = typeof p.deltaX === 'number' && Number.isFinite(p.deltaX) ? p.deltaX : 0;
    plan.deltaY = typeof p.deltaY === 'number' && Number.isFinite(p.deltaY) ? p.deltaY : 0;
    init.deltaX = plan.deltaX;
    init.deltaY = plan.deltaY;
    init.deltaMode = 0; // pixels, as Chromium reports CDP wheel events
  }
  return plan;
}

/**
 * The follow-up events a browser fires after a mouse button comes up, for a
 * target that is the common ancestor of where it went down and up.
 */
export function afterRelease(button, clickCount) {
  if (button === 0) return clickCount === 2 ? ['click', 'dblclick'] : ['click'];
  if (button === 1 || button === 2) return ['auxclick'];
  return [];
}

const editKeys = {
  Backspace: { kind: 'delete', dir: 'backward' },
  Delete: { kind: 'delete', dir: 'forward' },
  Tab: { kind: 'tab' },
  Enter: { kind: 'enter' },
  ArrowLeft: { kind: 'move', dir: 'left' },
  ArrowRight: { kind: 'move', dir: 'right' },
  ArrowUp: { kind: 'move', dir: 'up' },
  ArrowDown: { kind: 'move', dir: 'down' },
  Home: { kind: 'move', dir: 'home' },
  End: { kind: 'move', dir: 'end' },
  PageUp: { kind: 'move', dir: 'pageup' },
  PageDown: { kind: 'move', dir: 'pagedown' },
};

/**
 * What a key press does by default once the page did not cancel it: the
 * browser behaviour the adapter reproduces, chosen from the key and the
 * modifiers. The page side applies it to whatever has focus.
 */
export function keyAction({ key, text, mods = 0 }) {
  const ctrl = (mods & MOD_CTRL) !== 0 || (mods & MOD_META) !== 0;
  const alt = (mods & MOD_ALT) !== 0;
  const shift = (mods & MOD_SHIFT) !== 0;
  if (ctrl && !alt && typeof key === 'string' && key.length === 1) {
    switch (key.toLowerCase()) {
      case 'a':
        return { kind: 'selectAll' };
      case 'z':
        return shift ? { kind: 'redo' } : { kind: 'undo' };
      case 'y':
        return { kind: 'redo' };
      default:
        return { kind: 'none' };
    }
  }
  const edit = editKeys[key];
  if (edit) {
    const out = { ...edit };
    if (edit.kind === 'tab') out.back = shift;
    if (edit.kind === 'move') {
      out.extend = shift;
      out.word = ctrl || alt;
    }
    if (edit.kind === 'delete') out.word = ctrl || alt;
    if (edit.kind === 'enter') out.shift = shift;
    return out;
  }
  if (key === ' ' || key === 'Spacebar') return { kind: 'space', text: ctrl || alt ? '' : ' ' };
  if (key === 'Escape') return { kind: 'none' };
  if (typeof text === 'string' && text !== '' && !ctrl && !alt) return { kind: 'insert', text };
  return { kind: 'none' };
}

/** Printable text a key event carries, minus the control characters CDP puts in text for Enter. */
function printable(text) {
  if (typeof text !== 'string' || text === '') return '';
  return /^[\u0000-\u001f\u007f]$/.test(text) ? '' : text;
}

/**
 * The plan for one Input.dispatchKeyEvent: the DOM events to fire at the
 * focused element and the default action to apply if none was cancelled.
 * keyDown (with text) fires keydown and keypress, rawKeyDown only keydown,
 * char only keypress (the text arrives without a keydown, as IMEs send it).
 */
export function keyPlan(p) {
  const type = p.type;
  if (!['keyDown', 'rawKeyDown', 'keyUp', 'char'].includes(type)) {
    throw new TypeError(`unsupported key event type ${JSON.stringify(type)}`);
  }
  const mods = Number.isInteger(p.modifiers) ? p.modifiers : 0;
  const text = typeof p.text === 'string' ? p.text : '';
  let key = typeof p.key === 'string' && p.key !== '' ? p.key : '';
  if (key === '' && text === '\r') key = 'Enter';
  if (key === '' && text !== '') key = text;
  const code = typeof p.code === 'string' ? p.code : '';
  const vk = Number.isInteger(p.windowsVirtualKeyCode) ? p.windowsVirtualKeyCode : Number.isInteger(p.nativeVirtualKeyCode) ? p.nativeVirtualKeyCode : 0;
  const base = {
    key,
    code,
    location: Number.isInteger(p.location) ? p.location : 0,
    repeat: p.autoRepeat === true,
    isComposing: false,
    bubbles: true,
    cancelable: true,
    composed: true,
    ...modifierFlags(mods),
  };
  const events = [];
  const ins = printable(text);
  const typed = ins !== '' || text === '\r';
  if (type === 'keyDown' || type === 'rawKeyDown') {
    events.push({ type: 'keydown', init: { ...base, keyCode: vk, which: vk, charCode: 0 } });
    if (type === 'keyDown' && typed) {
      const cc = text === '\r' ? 13 : ins.codePointAt(0);
      events.push({ type: 'keypress', init: { ...base, keyCode: text === '\r' ? 13 : 0, which: cc, charCode: cc } });
    }
  } else if (type === 'char') {
    const cc = text === '\r' ? 13 : (ins.codePointAt(0) ?? 0);
    events.push({ type: 'keypress', init: { ...base, keyCode: 0, which: cc, charCode: cc } });
  } else {
    events.push({ type: 'keyup', init: { ...base, keyCode: vk, which: vk, charCode: 0 } });
  }
  let action = { kind: 'none' };
  if (type === 'keyUp') {
    // Buttons and checkboxes activate when Space comes up, not down.
    if (key === ' ') action = { kind: 'spaceUp' };
  } else if (type === 'char') {
    action = text === '\r' ? { kind: 'enter', shift: (mods & MOD_SHIFT) !== 0 } : ins ? { kind: 'insert', text: ins } : action;
  } else if (type === 'keyDown' || key !== '') {
    // rawKeyDown carries no text, so printable keys do nothing by default,
    // but editing keys (Backspace, arrows, Tab…) still act.
    action = keyAction({ key, text: type === 'keyDown' ? ins : '', mods });
    if (type === 'rawKeyDown' && (action.kind === 'insert' || action.kind === 'space')) action = { kind: 'none' };
  }
  return { events, action };
}
