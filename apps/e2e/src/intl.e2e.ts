import { serviceWithConnector } from './deployed-connector';

/** A connector that formats and sorts in several locales and time zones, as an integration would. */
const FORMATS = `
const { words, at } = Context.GetRequestEntity().RequestBody;
const partsOf = (format) => { try { return format.formatToParts(at).map((p) => p.type + '=' + p.value).join('|'); } catch (e) { return e.constructor.name; } };
Context.SetResponseEntity({ ResponseBody: {
  berlin: new Date(at).toLocaleString('de-DE', { timeZone: 'Europe/Berlin' }),
  amount: (1234.5).toLocaleString('de-DE', { style: 'currency', currency: 'EUR' }),
  local: new Date(at).toLocaleString(),
  offset: new Date(at).getTimezoneOffset(),
  sorted: words.slice().sort(new Intl.Collator('sv').compare),
  parts: partsOf(new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Tokyo', hour: 'numeric', minute: '2-digit' })),
  abortsNode: partsOf(new Intl.DateTimeFormat('gd', { year: 'numeric', month: 'short' })),
} });
`;

describe('Intl in the built service (embedded, worker threads)', () => {
  const deployed = serviceWithConnector('intl', 'Order', 'formats', FORMATS);

  it('formats in the named locales and time zones exactly as Node, stays in UTC otherwise, and survives date formats that abort Node', async () => {
    const at = Date.UTC(2024, 6, 1, 12, 30);
    const words = ['ö', 'z', 'å', 'a', 'ä', 'o'];
    const reply = await deployed.api.postJson(deployed.url(), deployed.token, { words, at });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({
      berlin: new Date(at).toLocaleString('de-DE', { timeZone: 'Europe/Berlin' }),
      amount: (1234.5).toLocaleString('de-DE', { style: 'currency', currency: 'EUR' }),
      local: new Date(at).toLocaleString('en-US', { timeZone: 'UTC' }),
      offset: 0,
      sorted: words.slice().sort(new Intl.Collator('sv').compare),
      parts: new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Tokyo', hour: 'numeric', minute: '2-digit' }).formatToParts(at).map((p) => `${p.type}=${p.value}`).join('|'),
      abortsNode: 'RangeError',
    });
    // The service is still there for the next call.
    expect((await deployed.api.postJson(deployed.url(), deployed.token, { words: [], at: 0 })).status).toBe(200);
  });
});
