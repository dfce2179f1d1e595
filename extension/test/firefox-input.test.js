import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mousePlan, afterRelease, keyPlan, keyAction, modifierFlags, MOD_ALT, MOD_CTRL, MOD_META, MOD_SHIFT } from '../lib/firefox-input.js';

test('modifier bits become the DOM flags', () => {
  assert.deepEqual(modifierFlags(MOD_ALT | MOD_SHIFT), { altKey: true, ctrlKey: false, metaKey: false, shiftKey: true });
  assert.deepEqual(modifierFlags(MOD_CTRL | MOD_META), { altKey: false, ctrlKey: true, metaKey: true, shiftKey: false });
  assert.deepEqual(modifierFlags(undefined), { altKey: false, ctrlKey: false, metaKey: false, shiftKey: false });
});

test('a press carries button, buttons, detail and modifiers', () => {
  const p = mousePlan({ type: 'mousePressed', x: 10, y: 20, button: 'right', clickCount: 1, modifiers: MOD_SHIFT });
  assert.equal(p.kind, 'down');
  assert.equal(p.button, 2);
  assert.equal(p.init.button, 2);
  assert.equal(p.init.buttons, 2, 'buttons defaults to the pressed button bit');
  assert.equal(p.init.detail, 1);
  assert.equal(p.init.shiftKey, true);
  assert.equal(p.init.clientX, 10);
  assert.equal(p.init.clientY, 20);
  assert.equal(p.init.bubbles && p.init.cancelable && p.init.composed, true);
});

test('explicit buttons win, and a release holds none by default', () => {
  assert.equal(mousePlan({ type: 'mousePressed', x: 0, y: 0, button: 'left', buttons: 5 }).init.buttons, 5);
  const up = mousePlan({ type: 'mouseReleased', x: 0, y: 0, button: 'left', clickCount: 2 });
  assert.equal(up.init.buttons, 0);
  assert.equal(up.init.detail, 2);
  assert.equal(up.clickCount, 2);
});

test('middle, back and forward map to DOM button numbers', () => {
  assert.equal(mousePlan({ type: 'mousePressed', x: 0, y: 0, button: 'middle' }).init.buttons, 4);
  assert.equal(mousePlan({ type: 'mousePressed', x: 0, y: 0, button: 'middle' }).button, 1);
  assert.equal(mousePlan({ type: 'mousePressed', x: 0, y: 0, button: 'back' }).button, 3);
  assert.equal(mousePlan({ type: 'mousePressed', x: 0, y: 0, button: 'forward' }).init.buttons, 16);
});

test('moves keep the held buttons and carry no detail', () => {
  const m = mousePlan({ type: 'mouseMoved', x: 5, y: 6, button: 'left', buttons: 1 });
  assert.equal(m.kind, 'move');
  assert.equal(m.init.buttons, 1, 'a drag keeps the left button held');
  assert.equal(m.init.button, 0);
  assert.equal(m.init.detail, 0);
});

test('wheel events carry pixel deltas', () => {
  const w = mousePlan({ type: 'mouseWheel', x: 1, y: 2, deltaX: 0, deltaY: 300 });
  assert.equal(w.kind, 'wheel');
  assert.equal(w.deltaY, 300);
  assert.equal(w.init.deltaY, 300);
  assert.equal(w.init.deltaMode, 0);
});

test('malformed mouse params are refused', () => {
  assert.throws(() => mousePlan({ type: 'mouseMoved', x: 'a', y: 1 }), TypeError);
  assert.throws(() => mousePlan({ type: 'mouseDragged', x: 1, y: 1 }), TypeError);
  assert.throws(() => mousePlan({ type: 'mousePressed', x: NaN, y: 1 }), TypeError);
});

test('after a release: click, dblclick on the second, auxclick for other buttons', () => {
  assert.deepEqual(afterRelease(0, 1), ['click']);
  assert.deepEqual(afterRelease(0, 2), ['click', 'dblclick']);
  assert.deepEqual(afterRelease(0, 3), ['click']);
  assert.deepEqual(afterRelease(2, 1), ['auxclick']);
  assert.deepEqual(afterRelease(1, 1), ['auxclick']);
  assert.deepEqual(afterRelease(3, 1), []);
});

test('keyDown with text fires keydown and keypress and inserts', () => {
  const p = keyPlan({ type: 'keyDown', key: 'a', code: 'KeyA', text: 'a', windowsVirtualKeyCode: 65, modifiers: 0 });
  assert.deepEqual(p.events.map((e) => e.type), ['keydown', 'keypress']);
  assert.equal(p.events[0].init.keyCode, 65);
  assert.equal(p.events[0].init.code, 'KeyA');
  assert.equal(p.events[1].init.charCode, 97);
  assert.deepEqual(p.action, { kind: 'insert', text: 'a' });
});

test('rawKeyDown fires only keydown and does not type', () => {
  const p = keyPlan({ type: 'rawKeyDown', key: 'a', code: 'KeyA', windowsVirtualKeyCode: 65 });
  assert.deepEqual(p.events.map((e) => e.type), ['keydown']);
  assert.deepEqual(p.action, { kind: 'none' });
});

test('Enter as CDP sends it: text "\\r" is the enter action, keypress code 13', () => {
  const p = keyPlan({ type: 'keyDown', key: 'Enter', code: 'Enter', text: '\r', windowsVirtualKeyCode: 13 });
  assert.deepEqual(p.events.map((e) => e.type), ['keydown', 'keypress']);
  assert.equal(p.events[1].init.charCode, 13);
  assert.equal(p.events[1].init.keyCode, 13);
  assert.equal(p.action.kind, 'enter');
});

test('editing keys act on rawKeyDown', () => {
  assert.deepEqual(keyPlan({ type: 'rawKeyDown', key: 'Backspace', code: 'Backspace' }).action, { kind: 'delete', dir: 'backward', word: false });
  assert.deepEqual(keyPlan({ type: 'rawKeyDown', key: 'Delete', modifiers: MOD_CTRL }).action, { kind: 'delete', dir: 'forward', word: true });
  assert.deepEqual(keyPlan({ type: 'rawKeyDown', key: 'Tab', modifiers: MOD_SHIFT }).action, { kind: 'tab', back: true });
  assert.deepEqual(keyPlan({ type: 'rawKeyDown', key: 'ArrowLeft', modifiers: MOD_SHIFT | MOD_CTRL }).action, { kind: 'move', dir: 'left', extend: true, word: true });
  assert.deepEqual(keyPlan({ type: 'rawKeyDown', key: 'End' }).action, { kind: 'move', dir: 'end', extend: false, word: false });
});

test('shortcuts do not type', () => {
  assert.deepEqual(keyAction({ key: 'a', text: 'a', mods: MOD_CTRL }), { kind: 'selectAll' });
  assert.deepEqual(keyAction({ key: 'a', text: 'a', mods: MOD_META }), { kind: 'selectAll' });
  assert.deepEqual(keyAction({ key: 'z', mods: MOD_CTRL }), { kind: 'undo' });
  assert.deepEqual(keyAction({ key: 'Z', mods: MOD_CTRL | MOD_SHIFT }), { kind: 'redo' });
  assert.deepEqual(keyAction({ key: 'c', text: 'c', mods: MOD_CTRL }), { kind: 'none' });
  assert.deepEqual(keyAction({ key: 'x', text: 'x', mods: MOD_ALT }), { kind: 'none' });
});

test('Space types in fields and activates buttons on keyup', () => {
  assert.deepEqual(keyPlan({ type: 'keyDown', key: ' ', code: 'Space', text: ' ' }).action, { kind: 'space', text: ' ' });
  assert.deepEqual(keyPlan({ type: 'keyUp', key: ' ', code: 'Space' }).action, { kind: 'spaceUp' });
  assert.deepEqual(keyPlan({ type: 'keyUp', key: 'a' }).action, { kind: 'none' });
});

test('keyUp fires keyup only', () => {
  const p = keyPlan({ type: 'keyUp', key: 'Shift', code: 'ShiftLeft', windowsVirtualKeyCode: 16, modifiers: 0, location: 1 });
  assert.deepEqual(p.events.map((e) => e.type), ['keyup']);
  assert.equal(p.events[0].init.location, 1);
  assert.equal(p.events[0].init.keyCode, 16);
});

test('char sends the text without a keydown, as an IME does', () => {
  const p = keyPlan({ type: 'char', text: 'é' });
  assert.deepEqual(p.events.map((e) => e.type), ['keypress']);
  assert.equal(p.events[0].init.key, 'é');
  assert.deepEqual(p.action, { kind: 'insert', text: 'é' });
});

test('the tool engine key sequences plan as a browser would act', () => {
  // What companion/tools/keys.go sends for "ctrl+a Delete": modifier down,
  // a down, a up, modifier up, then Delete.
  const seq = [
    { type: 'rawKeyDown', key: 'Control', code: 'ControlLeft', modifiers: MOD_CTRL },
    { type: 'rawKeyDown', key: 'a', code: 'KeyA', modifiers: MOD_CTRL },
    { type: 'keyUp', key: 'a', code: 'KeyA', modifiers: MOD_CTRL },
    { type: 'keyUp', key: 'Control', code: 'ControlLeft', modifiers: 0 },
    { type: 'rawKeyDown', key: 'Delete', code: 'Delete' },
  ];
  assert.deepEqual(
    seq.map((k) => keyPlan(k).action.kind),
    ['none', 'selectAll', 'none', 'none', 'delete'],
  );
  assert.equal(keyPlan(seq[1]).events[0].init.ctrlKey, true);
});

test('unknown key event types are refused', () => {
  assert.throws(() => keyPlan({ type: 'keyPress', key: 'a' }), TypeError);
});
