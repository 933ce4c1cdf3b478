/**
 * The names a module exports, read with the TypeScript parser and followed through `export *`:
 * declarations marked `export`, `export { a, b as c }` and `export ... from`. The doors test
 * compares an index's names with what other areas import.
 */
import { existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import ts from 'typescript'
import { parse } from './import-graph.js'

export interface ExportedName {
  name: string
  /** The line of the index that exports it (the `export * from` line for a name that comes through one). */
  line: number
  /** A type (interface, type alias, or re-exported with `type`): it has no value at run time. */
  type: boolean
}

const exported = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) && ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) === true

/** The names `file` (an absolute path) exports, each with the line of `file` it comes from. */
export function exportedNames(file: string, seen = new Set<string>()): ExportedName[] {
  if (seen.has(file) || !existsSync(file)) return []
  seen.add(file)
  const source = parse(file)
  const lineOf = (n: ts.Node): number => source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1
  const out: ExportedName[] = []
  for (const s of source.statements) {
    if (ts.isExportDeclaration(s)) {
      const c = s.exportClause
      if (c !== undefined && ts.isNamedExports(c)) {
        for (const e of c.elements) out.push({ name: e.name.text, line: lineOf(s), type: s.isTypeOnly || e.isTypeOnly })
      } else if (c !== undefined && ts.isNamespaceExport(c)) {
        out.push({ name: c.name.text, line: lineOf(s), type: s.isTypeOnly })
      } else if (s.moduleSpecifier !== undefined && ts.isStringLiteral(s.moduleSpecifier)) {
        const target = resolve(dirname(file), s.moduleSpecifier.text.replace(/\.js$/, '.ts'))
        for (const n of exportedNames(target, seen))
          if (n.name !== 'default') out.push({ name: n.name, line: lineOf(s), type: s.isTypeOnly || n.type })
      }
    } else if (ts.isVariableStatement(s) && exported(s)) {
      for (const d of s.declarationList.declarations)
        if (ts.isIdentifier(d.name)) out.push({ name: d.name.text, line: lineOf(s), type: false })
    } else if (
      (ts.isFunctionDeclaration(s) ||
        ts.isClassDeclaration(s) ||
        ts.isInterfaceDeclaration(s) ||
        ts.isTypeAliasDeclaration(s) ||
        ts.isEnumDeclaration(s)) &&
      exported(s) &&
      s.name !== undefined
    ) {
      out.push({
        name: s.name.text,
        line: lineOf(s),
        type: ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)
      })
    }
  }
  // a function's overloads declare its name more than once
  return out.filter((n, i) => out.findIndex((m) => m.name === n.name) === i)
}
