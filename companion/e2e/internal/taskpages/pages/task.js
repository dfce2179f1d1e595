// Shared by every task page: reinsDone tells the server that the page's own
// checks passed. Pages call it; agents never can (javascript_tool is not
// allowed in the task suite).
window.reinsDone = function (task, detail) {
  const q = 'task=' + encodeURIComponent(task) + '&detail=' + encodeURIComponent(detail || '');
  return fetch('/done?' + q, { method: 'POST', cache: 'no-store', keepalive: true });
};
