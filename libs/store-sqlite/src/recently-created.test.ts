import type { NewInvocation } from '@gi/domain';
import { RecentlyCreated } from './recently-created';

/** An invocation whose entity's JSON and raw body take `bytes` characters together. */
const invocation = (id: string, bytes = 10, botId = 'bot-a') => ({ id, botId, entityJson: 'x'.repeat(bytes - 2), rawBody: '{}' }) as NewInvocation;

describe('RecentlyCreated', () => {
  it('hands an invocation out once, and only to its own bot', () => {
    const recent = new RecentlyCreated({ count: 10, entityBytes: 16_000 });
    const created = invocation('a', 100);
    recent.remember(created);
    expect(recent.take({ botId: 'bot-b', id: 'a' })).toBeUndefined();
    expect(recent.take({ botId: 'bot-a', id: 'a' })).toBe(created);
    expect(recent.take({ botId: 'bot-a', id: 'a' })).toBeUndefined();
  });

  it('forgets the oldest past its count or its entity bytes, and never holds a large entity', () => {
    const recent = new RecentlyCreated({ count: 2, entityBytes: 1600 });
    for (const id of ['a', 'b', 'c']) recent.remember(invocation(id));
    expect(recent.take({ botId: 'bot-a', id: 'a' })).toBeUndefined();
    expect(recent.take({ botId: 'bot-a', id: 'b' })).toBeDefined();

    recent.remember(invocation('d', 100));
    recent.remember(invocation('e', 100));
    expect(recent.take({ botId: 'bot-a', id: 'c' })).toBeUndefined();
    // A sixteenth of 1600 is the most one entity may take, its raw body counted.
    recent.remember(invocation('large', 101));
    expect(recent.take({ botId: 'bot-a', id: 'large' })).toBeUndefined();
    expect(recent.take({ botId: 'bot-a', id: 'd' })).toBeDefined();

    const byBytes = new RecentlyCreated({ count: 100, entityBytes: 1600 });
    for (let i = 0; i <= 16; i++) byBytes.remember(invocation(`n${i}`, 100));
    expect(byBytes.take({ botId: 'bot-a', id: 'n0' })).toBeUndefined();
    expect(byBytes.take({ botId: 'bot-a', id: 'n1' })).toBeDefined();
  });

  it('counts a raw body that lies in its entity (a slice of it) once', () => {
    const body = `{"x":"${'y'.repeat(80)}"}`;
    const entityJson = `{"RequestParams":"","RequestHeaders":"","RequestBody":${body},"ResponseBody":null}`;
    const inEntity = (id: string) => ({ id, botId: 'bot-a', entityJson, rawBody: body }) as NewInvocation;
    const apart = (id: string) => ({ id, botId: 'bot-a', entityJson, rawBody: `${body} ` }) as NewInvocation;
    // Room for 16 with a raw body of their own, and for more than 24 whose raw body lies in the entity.
    const limits = { count: 100, entityBytes: 16 * (entityJson.length + body.length + 1) };
    const once = new RecentlyCreated(limits);
    for (let i = 0; i < 24; i++) once.remember(inEntity(`n${i}`));
    expect(once.take({ botId: 'bot-a', id: 'n0' })).toBeDefined();
    const twice = new RecentlyCreated(limits);
    for (let i = 0; i < 24; i++) twice.remember(apart(`n${i}`));
    expect(twice.take({ botId: 'bot-a', id: 'n7' })).toBeUndefined();
    expect(twice.take({ botId: 'bot-a', id: 'n8' })).toBeDefined();
  });
});
