// The Input domain of the Firefox adapter: mouse, key and text input as DOM
// events synthesized in the page's isolated world. firefox-input.js plans
// them in the background from the CDP params; firefox-isolated.js fires
// them and applies the default actions a browser would.

import { WireError, badParams } from './frames.js';
import { mousePlan, afterRelease, keyPlan } from './firefox-input.js';

/** How deep input follows frames inside frames. */
const MAX_FRAME_HOPS = 8;

/** A mouse plan moved into a frame whose viewport starts at the given point. */
export function inFrame(plan, x, y) {
  return { ...plan, x, y, init: { ...plan.init, clientX: x, clientY: y, screenX: x, screenY: y } };
}

/** @param {import('./cdp-firefox.js').FirefoxShared} fx */
export function inputDomain(fx) {
  /**
   * Input goes to the top document, and on into the frame it lands on (or
   * has focus) when that frame's document is of another origin: the top
   * document's script cannot reach in, so the event is sent again in the
   * frame, with coordinates of the frame's own viewport. Input for a page
   * that is being replaced is dropped, as a browser drops it: a key press
   * whose keydown submitted a form still sends its keyup.
   */
  async function input(tabId, op, args) {
    let opts = {};
    let a = args;
    for (let hop = 0; hop <= MAX_FRAME_HOPS; hop++) {
      let out;
      try {
        out = await fx.isolated(tabId, op, a, opts);
      } catch (err) {
        if (!(err instanceof WireError) || !/Cannot find context/.test(err.message)) throw err;
        return {};
      }
      // A link the click follows in the top document: said now, before the
      // result, so the engine waits for the page it leads to.
      if (hop === 0 && out && typeof out.nav === 'string' && out.nav !== '') {
        fx.emitIf(tabId, 'Page', 'Page.frameRequestedNavigation', { frameId: fx.frameIdOf(tabId), reason: 'anchorClick', url: out.nav, disposition: 'currentTab' });
      }
      const f = out && out.forward;
      if (!f) return {};
      opts = { frameId: f.frameId };
      if (op === 'mouse') a = [inFrame(a[0], f.x, f.y)];
    }
    return {};
  }

  return {
    methods: {
      async 'Input.dispatchKeyEvent'(tabId, p) {
        return input(tabId, 'key', [keyPlan(p)]);
      },

      async 'Input.dispatchMouseEvent'(tabId, p) {
        const plan = mousePlan(p);
        if (plan.kind === 'up') plan.after = afterRelease(plan.button, plan.clickCount);
        return input(tabId, 'mouse', [plan]);
      },

      async 'Input.insertText'(tabId, p) {
        if (typeof p.text !== 'string') throw badParams('text must be a string');
        return input(tabId, 'insertText', [p.text]);
      },
    },
  };
}
