// The history task's pages note every visit of this tab, and how the page
// was reached, in sessionStorage (this tab's own); part B judges the
// sequence: read A, read B, back to A, forward to B, reload B.
function visit(page) {
  const note = (kind) => {
    const v = JSON.parse(sessionStorage.getItem('visits') || '[]');
    v.push(page + ':' + kind);
    sessionStorage.setItem('visits', JSON.stringify(v));
    const want = ['a:navigate', 'b:navigate', 'a:back_forward', 'b:back_forward', 'b:reload'];
    if (v.slice(-want.length).join(' ') === want.join(' ')) reinsDone('history', v.join(' '));
  };
  const nav = performance.getEntriesByType('navigation')[0];
  note(nav ? nav.type : 'navigate');
  // A page restored from the back/forward cache runs no script again.
  addEventListener('pageshow', (e) => { if (e.persisted) note('back_forward'); });
}
