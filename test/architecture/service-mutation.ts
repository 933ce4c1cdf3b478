/**
 * Finds installs that change another area's service: a call of a mutator-named method (`setX`,
 * `addX`, `registerX`, `push`, `set`, `delete`, ...) or an assignment whose receiver is, or is
 * reached through, a value whose type an area provides (`platform.provide(KEY, value)` with
 * `KEY: AreaKey<T>`: T and the types of T's properties declared beside T) or a core service (the
 * types of `Platform`'s public readonly properties, but the HTTP server every area mounts routes on).
 *
 * Which area runs a piece of code is decided by reachability, not by folder: from each `Area`'s
 * `install`, every function it calls or constructs is walked with the type checker, so a helper in
 * another file (or an area that shares a folder with the one it extends, as mcp-extras does) is
 * judged as the install that runs it. Closures are not walked (a route handler or a listener runs
 * later, on behalf of a request) unless an array method calls them at once. Code inside a class
 * declared in the owner's folder (McpServer.registerTool changing its registry) is the owner's.
 * Names are a heuristic: a method that changes state under another name is not seen; the list
 * matches what setters and registries are called here.
 */
import { dirname, relative, sep } from 'node:path'
import ts from 'typescript'
import { ROOT } from './import-graph.js'

const MUTATOR =
  /^(set|add|register|unregister|remove|delete|clear|push|unshift|splice|extend|serve|attach|install|replace|reset)([A-Z_]|$)/

export interface Mutation {
  /** The area whose install reaches the code. */
  area: string
  /** The area whose service is changed, and the type it is reached through. */
  owner: string
  type: string
  file: string
  line: number
  /** The call or assignment, on one line. */
  text: string
}

interface AreaDecl {
  name: string
  install: ts.Node
}

interface Candidate {
  area: string
  node: ts.Node
  receiver: ts.Expression
}

const rel = (abs: string): string => relative(ROOT, abs).split(sep).join('/')

/** Array methods that call the function they are given before they return. */
const CALLS_NOW = new Set(['forEach', 'map', 'flatMap', 'filter', 'find', 'findLast', 'some', 'every', 'reduce'])

/** A closure passed to one of CALLS_NOW (`routes.forEach((r) => ...)`) runs as part of the code around it. */
function calledNow(fn: ts.Node): boolean {
  const call = fn.parent
  return (
    call !== undefined &&
    ts.isCallExpression(call) &&
    call.arguments.includes(fn as ts.Expression) &&
    ts.isPropertyAccessExpression(call.expression) &&
    CALLS_NOW.has(call.expression.name.text)
  )
}

const isCallee = (node: ts.Node): boolean =>
  node.parent !== undefined &&
  (ts.isCallExpression(node.parent) || ts.isNewExpression(node.parent)) &&
  node.parent.expression === node

/** Every mutation in the program of `files` (the runtime's sources, plus fixtures in the self-test). */
export function serviceMutations(files: readonly string[]): Mutation[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    `${ROOT}/tsconfig.json`,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'))
      }
    }
  )!
  const program = ts.createProgram({ rootNames: files, options: { ...parsed.options, noEmit: true } })
  const checker = program.getTypeChecker()
  const ours = (sf: ts.SourceFile): boolean =>
    !sf.isDeclarationFile && !sf.fileName.includes('/node_modules/') && sf.fileName.startsWith(ROOT)
  const sources = program.getSourceFiles().filter(ours)

  /** The bodies a symbol names in our sources: functions, methods, arrow initializers, constructors. */
  function bodiesOf(symbol: ts.Symbol | undefined): ts.Node[] {
    if (symbol === undefined) return []
    const s = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    const out: ts.Node[] = []
    for (const d of s.declarations ?? []) {
      if (!ours(d.getSourceFile())) continue
      if (ts.isFunctionLike(d) && 'body' in d && d.body !== undefined) out.push(d)
      else if (
        (ts.isVariableDeclaration(d) || ts.isPropertyDeclaration(d) || ts.isPropertyAssignment(d)) &&
        d.initializer !== undefined &&
        (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))
      )
        out.push(d.initializer)
      else if (ts.isClassDeclaration(d))
        for (const m of d.members)
          if (ts.isConstructorDeclaration(m) || (ts.isPropertyDeclaration(m) && m.initializer !== undefined))
            out.push(m)
    }
    return out
  }

  // the areas: `const x: Area = { name: '...', install ... }`
  const areas: AreaDecl[] = []
  for (const sf of sources)
    ts.forEachChild(sf, function find(node): void {
      if (
        ts.isVariableDeclaration(node) &&
        node.type !== undefined &&
        node.type.getText(sf) === 'Area' &&
        node.initializer !== undefined &&
        ts.isObjectLiteralExpression(node.initializer)
      ) {
        let name: string | undefined
        let install: ts.Node | undefined
        for (const p of node.initializer.properties) {
          const key = p.name !== undefined && ts.isIdentifier(p.name) ? p.name.text : undefined
          if (key === 'name' && ts.isPropertyAssignment(p) && ts.isStringLiteral(p.initializer))
            name = p.initializer.text
          if (key !== 'install') continue
          if (ts.isMethodDeclaration(p)) install = p
          else if (ts.isPropertyAssignment(p)) install = p.initializer
        }
        if (name !== undefined && install !== undefined) areas.push({ name, install })
      }
      ts.forEachChild(node, find)
    })

  // walk what each install runs, noting the services it provides and every mutator-shaped change
  const provided = new Map<ts.Symbol, string>()
  const candidates: Candidate[] = []
  for (const area of areas) {
    const seen = new Set<ts.Node>()
    const queue: ts.Node[] = []
    const enqueue = (n: ts.Node): void => {
      if (!seen.has(n)) {
        seen.add(n)
        queue.push(n)
      }
    }
    if (ts.isIdentifier(area.install)) for (const b of bodiesOf(checker.getSymbolAtLocation(area.install))) enqueue(b)
    else enqueue(area.install)
    const visit = (node: ts.Node, root: ts.Node): void => {
      // a closure runs later (a route handler, a listener), unless an array method calls it now
      if (node !== root && (ts.isFunctionLike(node) || ts.isClassLike(node)) && !calledNow(node)) return
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const callee = node.expression
        const named = ts.isPropertyAccessExpression(callee) ? callee.name : callee
        for (const b of bodiesOf(checker.getSymbolAtLocation(named))) enqueue(b)
      } else if (ts.isPropertyAccessExpression(node) && !isCallee(node)) {
        // a getter runs when read
        for (const b of bodiesOf(checker.getSymbolAtLocation(node.name))) if (ts.isGetAccessor(b)) enqueue(b)
      }
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const method = node.expression.name.text
        if (method === 'provide' && node.arguments.length === 2) {
          const key = checker.getTypeAtLocation(node.arguments[0]!)
          const [service] = key.getSymbol()?.name === 'AreaKey' ? checker.getTypeArguments(key as ts.TypeReference) : []
          const symbol = service?.aliasSymbol ?? service?.getSymbol()
          if (symbol !== undefined) provided.set(symbol, area.name)
        } else if (MUTATOR.test(method))
          candidates.push({ area: area.name, node, receiver: node.expression.expression })
      }
      if (
        ts.isBinaryExpression(node) &&
        node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
        node.operatorToken.kind <= ts.SyntaxKind.LastAssignment &&
        (ts.isPropertyAccessExpression(node.left) || ts.isElementAccessExpression(node.left))
      )
        candidates.push({ area: area.name, node, receiver: node.left.expression })
      if (ts.isDeleteExpression(node) && ts.isPropertyAccessExpression(node.expression))
        candidates.push({ area: area.name, node, receiver: node.expression.expression })
      ts.forEachChild(node, (child) => {
        visit(child, root)
      })
    }
    for (let next = queue.pop(); next !== undefined; next = queue.pop()) visit(next, next)
  }

  // the core's services: the types of Platform's public readonly properties declared in our sources
  const owned = new Map<ts.Symbol, { owner: string; type: string }>()
  const homes = new Map<string, Set<string>>()
  const home = (owner: string, d: ts.Declaration): void => {
    const set = homes.get(owner) ?? new Set<string>()
    set.add(dirname(d.getSourceFile().fileName))
    homes.set(owner, set)
  }
  for (const sf of sources.filter((f) => rel(f.fileName) === 'runtime/platform.ts'))
    for (const c of sf.statements.filter(ts.isClassDeclaration))
      for (const m of c.members) {
        if (!ts.isPropertyDeclaration(m) || !ts.isIdentifier(m.name)) continue
        const mods = ts.getCombinedModifierFlags(m)
        if (!(mods & ts.ModifierFlags.Readonly) || mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected))
          continue
        // routes (`http.delete(path, ...)` too) are how every area attaches to the server, not a change of it
        if (m.name.text === 'http') continue
        const t = checker.getTypeAtLocation(m)
        const s = t.aliasSymbol ?? t.getSymbol()
        const d = s?.declarations?.[0]
        if (s === undefined || d === undefined || !ours(d.getSourceFile())) continue
        owned.set(s, { owner: 'core', type: `Platform.${m.name.text}` })
        home('core', d)
      }

  // what each area owns: its service's type and the types of that type's properties declared beside it
  for (const [symbol, owner] of provided) {
    owned.set(symbol, { owner, type: symbol.name })
    const decl = symbol.declarations?.[0]
    if (decl === undefined) continue
    home(owner, decl)
    const folder = dirname(decl.getSourceFile().fileName)
    const type = checker.getDeclaredTypeOfSymbol(symbol)
    for (const prop of checker.getPropertiesOfType(type)) {
      const propType = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(prop, decl))
      const s = propType.aliasSymbol ?? propType.getSymbol()
      const d = s?.declarations?.[0]
      if (s === undefined || d === undefined || owned.has(s)) continue
      if (!(s.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface))) continue
      if (dirname(d.getSourceFile().fileName) === folder) owned.set(s, { owner, type: `${symbol.name}.${prop.name}` })
    }
  }
  const ownerOf = (e: ts.Expression): { owner: string; type: string } | undefined => {
    const t = checker.getNonNullableType(checker.getTypeAtLocation(e))
    const s = t.aliasSymbol ?? t.getSymbol()
    return s === undefined ? undefined : owned.get(s)
  }
  const insideOwnClass = (node: ts.Node, owner: string): boolean => {
    for (let n: ts.Node | undefined = node; n !== undefined; n = n.parent)
      if (ts.isClassLike(n)) return homes.get(owner)?.has(dirname(n.getSourceFile().fileName)) === true
    return false
  }

  const out: Mutation[] = []
  const reported = new Set<string>()
  for (const c of candidates) {
    let found: { owner: string; type: string } | undefined
    for (let e: ts.Expression | undefined = c.receiver; e !== undefined && found === undefined;) {
      const o = ownerOf(e)
      if (o !== undefined && o.owner !== c.area) found = o
      if (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e) || ts.isNonNullExpression(e))
        e = e.expression
      else if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression)) e = e.expression.expression
      else if (ts.isParenthesizedExpression(e)) e = e.expression
      else e = undefined
    }
    if (found === undefined || insideOwnClass(c.node, found.owner)) continue
    const sf = c.node.getSourceFile()
    const line = sf.getLineAndCharacterOfPosition(c.node.getStart(sf)).line + 1
    const key = `${c.area}\0${sf.fileName}\0${line}`
    if (reported.has(key)) continue
    reported.add(key)
    const text = c.node.getText(sf).split('\n')[0]!.trim()
    out.push({
      area: c.area,
      ...found,
      file: rel(sf.fileName),
      line,
      text: text.length > 90 ? `${text.slice(0, 87)}...` : text
    })
  }
  return out.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.area.localeCompare(b.area))
}
