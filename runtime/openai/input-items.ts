import type { Interaction } from '../interactions/index.js'
import { invalid } from './response-input.js'
import { inputOf } from './response-object.js'

const MAX_LIMIT = 100

/**
 * `GET /v1/responses/{id}/input_items`: the response's input items, paged as the Responses API
 * pages them (`limit` 1 to 100, default 20; `order` `desc` by default; `after` an item id).
 * A turn started by the interactions API kept no items: its list is empty.
 */
export function inputItemsPage(i: Interaction, query: URLSearchParams): Record<string, unknown> {
  const limit = query.get('limit') ?? '20'
  if (!/^\d{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT)
    throw invalid('limit', `'limit' must be an integer from 1 to ${MAX_LIMIT}`)
  const order = query.get('order') ?? 'desc'
  if (order !== 'asc' && order !== 'desc') throw invalid('order', "'order' must be 'asc' or 'desc'")
  // an item's id names its response and its place in the input, so it stays the same on every read
  const all = (inputOf(i)?.items ?? []).map((item, n) => ({ id: `item_${i.id}_${n}`, ...item }))
  if (order === 'desc') all.reverse()
  const after = query.get('after')
  let from = 0
  if (after !== null) {
    const at = all.findIndex((item) => item.id === after)
    if (at < 0) throw invalid('after', `no input item of this response has the id '${after}'`)
    from = at + 1
  }
  const data = all.slice(from, from + Number(limit))
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: from + data.length < all.length
  }
}
