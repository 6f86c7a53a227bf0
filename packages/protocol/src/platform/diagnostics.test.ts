/**
 * The diagnostics seam: the browser's in-page channels behave as Node's diagnostics_channel does for the
 * client (hasSubscribers, publish to every listener with the channel's name, unsubscribe, a throwing listener
 * does not break the publisher), and the Node side is Node's own registry.
 */
import diagnostics_channel from 'node:diagnostics_channel';
import * as page from './browser.js';
import * as node from './node.js';

describe('diagnostics channels', () => {
  it('in the page: subscribe, publish with the name, unsubscribe; no listener, no subscribers', () => {
    const ch = page.diagnosticsChannel('mq:test:page');
    expect(ch.hasSubscribers).toBe(false);
    const got: Array<[unknown, string | symbol]> = [];
    const listener = (m: unknown, name: string | symbol) => void got.push([m, name]);
    page.subscribeDiagnostics('mq:test:page', listener);
    expect(ch.hasSubscribers).toBe(true);
    expect(page.diagnosticsChannel('mq:test:page')).toBe(ch); // one channel per name
    ch.publish({ n: 1 });
    expect(got).toEqual([[{ n: 1 }, 'mq:test:page']]);
    expect(page.unsubscribeDiagnostics('mq:test:page', listener)).toBe(true);
    expect(page.unsubscribeDiagnostics('mq:test:page', listener)).toBe(false);
    expect(ch.hasSubscribers).toBe(false);
    ch.publish({ n: 2 });
    expect(got).toHaveLength(1);
  });

  it('in the page: a listener that throws does not stop the others or the publisher (its error is rethrown apart)', async () => {
    const ch = page.diagnosticsChannel('mq:test:throws');
    const seen: unknown[] = [];
    page.subscribeDiagnostics('mq:test:throws', () => {
      throw new Error('bad listener');
    });
    page.subscribeDiagnostics('mq:test:throws', (m) => void seen.push(m));
    const rethrown = new Promise<unknown>((resolve) => {
      const original = globalThis.queueMicrotask;
      globalThis.queueMicrotask = (fn) => {
        globalThis.queueMicrotask = original;
        try {
          fn();
        } catch (err) {
          resolve(err);
        }
      };
    });
    expect(() => ch.publish('x')).not.toThrow();
    expect(seen).toEqual(['x']);
    expect(await rethrown).toEqual(new Error('bad listener'));
  });

  it("in Node: the seam is Node's diagnostics_channel registry", () => {
    const got: unknown[] = [];
    const listener = (m: unknown) => void got.push(m);
    node.subscribeDiagnostics('mq:test:node', listener);
    diagnostics_channel.channel('mq:test:node').publish('via node');
    node.diagnosticsChannel('mq:test:node').publish('via seam');
    expect(got).toEqual(['via node', 'via seam']);
    expect(node.unsubscribeDiagnostics('mq:test:node', listener)).toBe(true);
  });
});
