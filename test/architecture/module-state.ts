/**
 * Finds module-level mutable state in a source file: a top-level `let` or `var`, a top-level
 * `const` whose value the file changes (`x.set(…)`, `x.push(…)`, `x.k = …`, `delete x[k]`,
 * `Object.assign(x, …)`), and an exported collection (`new Map/Set/WeakMap/WeakSet/Array`) not
 * typed Readonly, which any importer could change. Such state is shared by every
 * Platform in the process, which docs/architecture.md rules out ("no module singletons").
 */
import ts from 'typescript'

export interface ModuleState {
  name: string
  line: number
  /** What makes it state: `let`, `var`, `mutated: x.set(…)`, `exported Map`. */
  why: string
}

const COLLECTIONS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet', 'Array'])
const MUTATORS = new Set([
  'set',
  'add',
  'delete',
  'clear',
  'push',
  'pop',
  'shift',
  'unshift',
  'splice',
  'sort',
  'reverse',
  'fill',
  'copyWithin'
])

/** `x as T`, `x satisfies T`, `(x)` and `x!` are the value x. */
function unwrap(e: ts.Expression): ts.Expression {
  while (
    ts.isAsExpression(e) ||
    ts.isSatisfiesExpression(e) ||
    ts.isParenthesizedExpression(e) ||
    ts.isNonNullExpression(e)
  )
    e = e.expression
  return e
}

/** The identifier at the root of `x`, `x.a`, `x[k]`, `x.a.b`. */
function rootOf(e: ts.Expression): string | undefined {
  e = unwrap(e)
  while (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)) e = unwrap(e.expression)
  return ts.isIdentifier(e) ? e.text : undefined
}

const isMember = (e: ts.Expression): boolean =>
  ts.isPropertyAccessExpression(unwrap(e)) || ts.isElementAccessExpression(unwrap(e))

/** For each name in `names`, the first place the file changes what it is bound to. */
function mutations(source: ts.SourceFile, names: Set<string>): Map<string, string> {
  const found = new Map<string, string>()
  const note = (name: string | undefined, node: ts.Node): void => {
    if (name === undefined || !names.has(name) || found.has(name)) return
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
    found.set(name, `line ${line}: ${node.getText(source).split('\n')[0]!.slice(0, 60)}`)
  }
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = unwrap(node.expression)
      if (ts.isPropertyAccessExpression(callee) && MUTATORS.has(callee.name.text)) note(rootOf(callee.expression), node)
      if (callee.getText(source) === 'Object.assign' && node.arguments[0] !== undefined)
        note(rootOf(node.arguments[0]), node)
    } else if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
      node.operatorToken.kind <= ts.SyntaxKind.LastAssignment &&
      isMember(node.left)
    ) {
      note(rootOf(node.left), node)
    } else if (ts.isDeleteExpression(node)) {
      note(rootOf(node.expression), node)
    } else if ((ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) && isMember(node.operand)) {
      if (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)
        note(rootOf(node.operand), node)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

export function moduleState(source: ts.SourceFile): ModuleState[] {
  const out: ModuleState[] = []
  const candidates = new Map<string, { line: number; exported: string | undefined }>()
  for (const s of source.statements) {
    if (!ts.isVariableStatement(s)) continue
    const flags = s.declarationList.flags
    const exported = s.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) === true
    for (const d of s.declarationList.declarations) {
      const line = source.getLineAndCharacterOfPosition(d.getStart(source)).line + 1
      const names = ts.isIdentifier(d.name) ? [d.name.text] : [d.name.getText(source)]
      if ((flags & ts.NodeFlags.Const) === 0) {
        for (const name of names) out.push({ name, line, why: flags & ts.NodeFlags.Let ? 'let' : 'var' })
        continue
      }
      const init = d.initializer === undefined ? undefined : unwrap(d.initializer)
      if (init === undefined || !ts.isIdentifier(d.name)) continue
      const collection = ts.isNewExpression(init) && COLLECTIONS.has(init.expression.getText(source))
      // an exported collection typed without Readonly can be changed by any importer
      const readonlyType = d.type !== undefined && /^Readonly/.test(d.type.getText(source))
      const exportedMutable =
        exported && collection && !readonlyType ? `exported ${init.expression.getText(source)}` : undefined
      candidates.set(d.name.text, { line, exported: exportedMutable })
    }
  }
  const changed = mutations(source, new Set(candidates.keys()))
  for (const [name, c] of candidates) {
    const m = changed.get(name)
    if (m !== undefined) out.push({ name, line: c.line, why: `changed at ${m}` })
    else if (c.exported !== undefined) out.push({ name, line: c.line, why: c.exported })
  }
  return out.sort((a, b) => a.line - b.line)
}
