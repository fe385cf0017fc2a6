import type { NewInvocation } from '@gi/domain';
import { RecentlyCreated } from './recently-created';

const invocation = (id: string, botId = 'bot-a') => ({ id, botId }) as NewInvocation;

describe('RecentlyCreated', () => {
  it('hands an invocation out once, and only to its own bot', () => {
    const recent = new RecentlyCreated({ count: 10, entityBytes: 16_000 });
    const created = invocation('a');
    recent.remember(created, '{}', 100);
    expect(recent.take({ botId: 'bot-b', id: 'a' })).toBeUndefined();
    expect(recent.take({ botId: 'bot-a', id: 'a' })).toEqual({ invocation: created, entityJson: '{}' });
    expect(recent.take({ botId: 'bot-a', id: 'a' })).toBeUndefined();
  });

  it('forgets the oldest past its count or its entity bytes, and never holds a large entity', () => {
    const recent = new RecentlyCreated({ count: 2, entityBytes: 1600 });
    for (const id of ['a', 'b', 'c']) recent.remember(invocation(id), '{}', 10);
    expect(recent.take({ botId: 'bot-a', id: 'a' })).toBeUndefined();
    expect(recent.take({ botId: 'bot-a', id: 'b' })).toBeDefined();

    recent.remember(invocation('d'), '{}', 100);
    recent.remember(invocation('e'), '{}', 100);
    expect(recent.take({ botId: 'bot-a', id: 'c' })).toBeUndefined();
    recent.remember(invocation('large'), '{}', 101);
    expect(recent.take({ botId: 'bot-a', id: 'large' })).toBeUndefined();
    expect(recent.take({ botId: 'bot-a', id: 'd' })).toBeDefined();

    const byBytes = new RecentlyCreated({ count: 100, entityBytes: 1600 });
    for (let i = 0; i <= 16; i++) byBytes.remember(invocation(`n${i}`), '{}', 100);
    expect(byBytes.take({ botId: 'bot-a', id: 'n0' })).toBeUndefined();
    expect(byBytes.take({ botId: 'bot-a', id: 'n1' })).toBeDefined();
  });
});
