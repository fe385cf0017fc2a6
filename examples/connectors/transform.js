// Reshape an order payload: totals per line, a grand total, and the caller's query parameters.
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");

const order = entity.RequestBody || {};
const lines = (order.items || []).map((item) => ({
  sku: String(item.sku),
  quantity: Number(item.qty) || 0,
  total: Math.round((Number(item.qty) || 0) * (Number(item.price) || 0) * 100) / 100,
}));
const params = Object.fromEntries(
  entity.RequestParams.split("&").filter(Boolean).map((pair) => pair.split("=").map(decodeURIComponent)),
);

Context.Log("transformed", lines.length, "lines");
entity.ResponseBody = {
  orderId: order.orderId,
  customer: (order.customer && order.customer.name) || "unknown",
  lines,
  grandTotal: lines.reduce((sum, line) => sum + line.total, 0),
  source: params.source || null,
};
Context.SetResponseEntity(entity);
