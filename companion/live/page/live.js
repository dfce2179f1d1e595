// Reins Live view page. It draws the frames the companion streams over
// /live-ws and, only while Take over is on, sends the mouse and keys used on
// the picture. The state lives in one object, window.__reinsLive, which the
// end-to-end tests read through the DevTools protocol; a 'reinslive' event
// on window marks every change, so they can wait for one instead of polling.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const canvas = $('screen');
  const ctx = canvas.getContext('2d');
  const ruleWatching = $('rule').innerHTML;

  const st = {
    state: 'connecting', // connecting | live | ended
    tab: null,
    viewport: null,
    held: false, // this page holds Take over
    heldElsewhere: false, // another Live view window holds it
    received: 0,
    drawn: 0,
    lastSeq: 0,
    fps: 0,
    metadata: null,
    error: null,
    notices: [],
  };
  window.__reinsLive = st;
  const changed = () => dispatchEvent(new Event('reinslive'));

  let ws;
  try {
    // The socket sits beside the page, under the session's own path, where
    // the session cookie is sent.
    ws = new WebSocket(`ws://${location.host}${location.pathname.replace(/[^/]*$/, 'ws')}`);
  } catch (e) {
    end('failed', 'Live view could not connect to Reins.');
    return;
  }

  ws.onmessage = (ev) => {
    let m;
    try {
      m = JSON.parse(ev.data);
    } catch {
      return;
    }
    switch (m.kind) {
      case 'hello':
        st.tab = m.tab;
        st.viewport = m.viewport;
        st.state = 'live';
        showTab(m.tab);
        setConn('live');
        $('takeover').disabled = false;
        if (!canvas.width && m.viewport && m.viewport.width > 0) {
          canvas.width = Math.round(m.viewport.width);
          canvas.height = Math.round(m.viewport.height);
        }
        break;
      case 'frame':
        st.received++;
        st.lastSeq = m.seq;
        onFrame(m);
        break;
      case 'takeover':
        setHeld(m.byYou, m.held && !m.byYou);
        break;
      case 'tab':
        st.tab = m.tab;
        showTab(m.tab);
        break;
      case 'notice':
        notice(m.message);
        break;
      case 'error':
        end(m.code, m.message);
        break;
    }
    changed();
  };
  ws.onclose = () => {
    if (st.state === 'ended') return;
    // A refused upgrade and a dropped connection look the same from here.
    if (st.state === 'connecting') end('closed', 'Live view could not connect to Reins: the view may have expired, or Reins is not running.');
    else end('closed', 'The connection to Reins was lost. Reins may have stopped.');
  };

  function send(m) {
    if (ws.readyState === WebSocket.OPEN && st.state === 'live') ws.send(JSON.stringify(m));
  }

  function showTab(t) {
    $('title').textContent = t.title || t.url || `Tab ${t.id}`;
    $('url').textContent = t.url;
    $('browser').textContent = t.browser;
    document.title = `Live: ${t.title || t.url}`;
  }

  function setConn(s) {
    const el = $('conn');
    el.className = `conn ${s}`;
    el.textContent = s;
  }

  function end(code, message) {
    st.state = 'ended';
    st.error = { code, message };
    setHeld(false, false);
    setConn('ended');
    $('takeover').disabled = true;
    $('ended-message').textContent = message;
    $('ended').hidden = false;
    $('fps').textContent = '– fps';
    try {
      ws.close(1000);
    } catch {}
    changed();
  }

  let noticeTimer;
  function notice(text) {
    st.notices.push(text);
    const el = $('notice');
    el.textContent = text;
    el.hidden = false;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => (el.hidden = true), 5000);
  }

  // Frames: decode the newest, skip any that arrived while decoding.
  let pending = null;
  let decoding = false;
  const drawTimes = [];
  function onFrame(m) {
    pending = m;
    if (!decoding) pump();
  }
  async function pump() {
    decoding = true;
    while (pending) {
      const m = pending;
      pending = null;
      try {
        const bin = atob(m.data);
        const bytes = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
        const bmp = await createImageBitmap(new Blob([bytes], { type: 'image/jpeg' }));
        if (st.state === 'ended') {
          bmp.close();
          break;
        }
        if (canvas.width !== bmp.width || canvas.height !== bmp.height) {
          canvas.width = bmp.width;
          canvas.height = bmp.height;
        }
        ctx.drawImage(bmp, 0, 0);
        bmp.close();
        st.metadata = m.metadata;
        st.drawn++;
        drawTimes.push(performance.now());
        changed();
      } catch (e) {
        // A frame that does not decode is skipped; the next one replaces it.
      }
    }
    decoding = false;
  }
  setInterval(() => {
    const now = performance.now();
    while (drawTimes.length && now - drawTimes[0] > 1000) drawTimes.shift();
    st.fps = drawTimes.length;
    if (st.state === 'live') $('fps').textContent = `${st.fps} fps`;
  }, 500);

  // Take over.
  $('takeover').addEventListener('click', () => send({ kind: 'takeover', on: !st.held }));
  function setHeld(mine, elsewhere) {
    st.held = mine;
    st.heldElsewhere = elsewhere;
    const b = $('takeover');
    b.setAttribute('aria-pressed', String(mine));
    b.textContent = mine ? 'Release' : 'Take over';
    canvas.classList.toggle('held', mine);
    const rule = $('rule');
    rule.classList.toggle('held', mine);
    if (mine) {
      rule.textContent = 'You have taken over this tab: your mouse and keys on the picture reach it, and agents cannot click or type in it. Release to give it back.';
      canvas.focus();
    } else if (elsewhere) {
      rule.textContent = 'Another Live view window has taken over this tab. Take over here to move it to this window.';
    } else {
      rule.innerHTML = ruleWatching;
    }
  }

  // Input, sent only while this page holds Take over.
  const buttons = ['left', 'middle', 'right', 'back', 'forward'];
  function mods(e) {
    return (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
  }
  function point(e) {
    const r = canvas.getBoundingClientRect();
    return { x: (e.clientX - r.left) / r.width, y: (e.clientY - r.top) / r.height };
  }
  function mouse(type, e, extra) {
    const p = point(e);
    return Object.assign(
      { kind: 'mouse', type, x: p.x, y: p.y, button: 'none', buttons: e.buttons, clickCount: 0, deltaX: 0, deltaY: 0, modifiers: mods(e) },
      extra,
    );
  }
  // Moves are coalesced to one per animation frame.
  let moveMsg = null;
  canvas.addEventListener('mousemove', (e) => {
    if (!st.held) return;
    const first = moveMsg === null;
    moveMsg = mouse('move', e);
    if (first) {
      requestAnimationFrame(() => {
        send(moveMsg);
        moveMsg = null;
      });
    }
  });
  canvas.addEventListener('mousedown', (e) => {
    if (!st.held) return;
    e.preventDefault();
    canvas.focus();
    send(mouse('down', e, { button: buttons[e.button] || 'none', clickCount: e.detail || 1 }));
  });
  canvas.addEventListener('mouseup', (e) => {
    if (!st.held) return;
    e.preventDefault();
    send(mouse('up', e, { button: buttons[e.button] || 'none', clickCount: e.detail || 1 }));
  });
  canvas.addEventListener(
    'wheel',
    (e) => {
      if (!st.held) return;
      e.preventDefault();
      const k = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? canvas.clientHeight : 1;
      send(mouse('wheel', e, { deltaX: e.deltaX * k, deltaY: e.deltaY * k }));
    },
    { passive: false },
  );
  canvas.addEventListener('contextmenu', (e) => {
    if (st.held) e.preventDefault();
  });
  function key(type, e) {
    let text = '';
    if (type === 'down') text = e.key.length === 1 ? e.key : e.key === 'Enter' ? '\r' : '';
    return { kind: 'key', type, key: e.key, code: e.code, text, modifiers: mods(e), keyCode: e.keyCode };
  }
  canvas.addEventListener('keydown', (e) => {
    if (!st.held || e.isComposing) return;
    e.preventDefault();
    send(key('down', e));
  });
  canvas.addEventListener('keyup', (e) => {
    if (!st.held || e.isComposing) return;
    e.preventDefault();
    send(key('up', e));
  });
})();
