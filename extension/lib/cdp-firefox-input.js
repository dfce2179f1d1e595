// The Input domain of the Firefox adapter: mouse, key and text input as DOM
// events synthesized in the page's isolated world. firefox-input.js plans
// them in the background from the CDP params; firefox-isolated.js fires
// them and applies the default actions a browser would.

import { WireError, badParams } from './frames.js';
import { mousePlan, afterRelease, keyPlan } from './firefox-input.js';

/** @param {import('./cdp-firefox.js').FirefoxShared} fx */
export function inputDomain(fx) {
  /**
   * Input for a page that is being replaced is dropped, as a browser drops
   * it: a key press whose keydown submitted a form still sends its keyup.
   */
  async function input(tabId, op, args) {
    try {
      const r = await fx.isolated(tabId, op, args);
      // A link the click follows: said now, before the result, so the
      // engine waits for the page it leads to.
      if (r && typeof r.nav === 'string' && r.nav !== '') {
        fx.emitIf(tabId, 'Page', 'Page.frameRequestedNavigation', { frameId: fx.frameIdOf(tabId), reason: 'anchorClick', url: r.nav, disposition: 'currentTab' });
      }
    } catch (err) {
      if (!(err instanceof WireError) || !/Cannot find context/.test(err.message)) throw err;
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
