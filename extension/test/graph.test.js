import { test } from 'node:test';
import assert from 'node:assert/strict';
import { graphProblem } from '../lib/graph.js';

const good = () => ({
  thisBrowserId: 'b1',
  agents: [{ id: 'a1', name: 'Claude' }],
  browsers: [
    { id: 'b1', name: 'Chrome', mode: 'extension', sharedTabs: 2, browserEngine: 'chromium' },
    { id: 'b2', name: 'dev', mode: 'dev', sharedTabs: 0, context: 'ctx' },
  ],
});

test('a valid graph passes, with or without browserEngine', () => {
  assert.equal(graphProblem(good()), '');
  const g = good();
  delete g.browsers[0].browserEngine;
  assert.equal(graphProblem(g), '');
  assert.equal(graphProblem({ thisBrowserId: 'x', agents: [], browsers: [{ id: 'x', name: '', mode: 'extension', sharedTabs: 0 }] }), '');
});

test('invalid graphs are refused with a reason', () => {
  const cases = [
    [(g) => null, 'object'],
    [(g) => [], 'object'],
    [(g) => ({ ...g, thisBrowserId: '' }), 'thisBrowserId'],
    [(g) => ({ ...g, agents: {} }), 'agents'],
    [(g) => ({ ...g, browsers: null }), 'browsers'],
    [(g) => ({ ...g, agents: [...g.agents, { id: 'a1', name: 'dup' }] }), 'not unique'],
    [(g) => ({ ...g, browsers: [...g.browsers, { ...g.browsers[1] }] }), 'not unique'],
    [(g) => { g.browsers[1].mode = 'remote'; return g; }, 'mode'],
    [(g) => { g.browsers[1].sharedTabs = -1; return g; }, 'sharedTabs'],
    [(g) => { g.browsers[1].sharedTabs = 1.5; return g; }, 'sharedTabs'],
    [(g) => { g.browsers[1].sharedTabs = 2 ** 53; return g; }, 'sharedTabs'],
    [(g) => { g.browsers[1].sharedTabs = '3'; return g; }, 'sharedTabs'],
    [(g) => { g.browsers[1].browserEngine = 'webkit'; return g; }, 'browserEngine'],
    [(g) => ({ ...g, thisBrowserId: 'b9' }), 'receiving browser'],
    [(g) => ({ ...g, thisBrowserId: 'b2' }), 'mode extension'],
    [(g) => { g.agents[0] = 'a1'; return g; }, 'object'],
    [(g) => { delete g.browsers[0].id; return g; }, 'no id'],
  ];
  for (const [mutate, want] of cases) {
    const problem = graphProblem(mutate(good()));
    assert.ok(problem.includes(want), `want ${want}, got ${JSON.stringify(problem)}`);
  }
});
