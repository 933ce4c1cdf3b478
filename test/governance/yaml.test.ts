import t from 'tap'
import { PolicyRegistry } from '../../runtime/governance/registry.js'
import { registerBuiltins } from '../../runtime/governance/types/index.js'
import { DryRunPolicy, SwappablePolicy } from '../../runtime/governance/wrappers.js'
import { ParserRegistry, YamlPolicyParser } from '../../runtime/governance/yaml-parser.js'
import { parser, pre } from '../helpers/governance.js'

const parse = (y: string, src = 'yaml:p.yaml') => parser().parse(src, y)

t.test('native schema: name, type, version, config; doc version is the fallback; else embedded', async (t) => {
  const ps = parse(`version: "2026-01"
policies:
  - name: no-drop
    type: deny-list
    config: {phrases: [drop table]}
  - name: short
    type: message-length
    version: "7"
    config: {max-chars: 5}
`)
  t.same(
    ps.map((p) => [p.name, p.className, p.version, p.source]),
    [
      ['no-drop', 'DenyListPolicy', '2026-01', 'yaml:p.yaml'],
      ['short', 'MessageLengthPolicy', '7', 'yaml:p.yaml']
    ]
  )
  t.equal(parse('policies:\n  - {name: a, type: kill-switch}\n')[0]!.version, 'embedded')
})

t.test('empty document, null policies or no policies key: no policies', async (t) => {
  t.same(parse(''), [])
  t.same(parse('version: "1"\n'), [])
  t.same(parse('policies:\n'), [])
})

t.test('type names are case-insensitive', async (t) => {
  t.equal(parse('policies:\n  - {name: a, type: Deny-List, config: {phrases: [x]}}\n')[0]!.className, 'DenyListPolicy')
})

t.test('errors name the entry: policies[1] (broken)', async (t) => {
  t.throws(
    () =>
      parse(
        'policies:\n  - {name: ok, type: kill-switch}\n  - {name: broken, type: message-length, config: {max-chars: 0}}\n'
      ),
    {
      message:
        "failed to build policies[1] ('broken') in yaml:p.yaml: message-length requires a positive 'max-chars' under config"
    }
  )
  t.throws(
    () => parse('policies:\n  - {name: x, type: nope}\n'),
    /failed to build policies\[0\] \('x'\) in yaml:p.yaml: unknown policy type 'nope' \(known: \[allow-list, authorization, concurrency-limit, cost-ceiling, deny-list, kill-switch, message-length, metadata-presence, output-length-zscore, pii-redaction, preference, rate-limit, time-window\]\)/
  )
  t.throws(() => parse('policies:\n  - {type: kill-switch}\n'), /policies\[0\] \(''\) .*'name' must not be blank/)
  t.throws(() => parse('policies:\n  - {name: a}\n'), /'type' must not be blank/)
  t.throws(
    () => parse('policies:\n  - {name: a, type: kill-switch}\n  - {name: a, type: kill-switch}\n'),
    /policies\[1\] \('a'\).*duplicate policy name 'a'/
  )
  t.throws(() => parse('policies:\n  - {name: a, type: kill-switch, confg: {}}\n'), /unknown key 'confg'/)
  t.throws(() => parse('policies:\n  - {name: a, type: kill-switch, config: [1]}\n'), /'config' must be a map/)
  t.throws(() => parse('policies:\n  - just-a-string\n'), /policies\[0\].*an entry must be a map/)
  t.throws(() => parse('policies: {a: 1}\n'), /'policies' must be a list/)
  t.throws(() => parse('- 1\n- 2\n'), /a policy document must be a map/)
})

t.test('safe YAML: duplicate keys, custom tags and alias bombs are rejected', async (t) => {
  t.throws(() => parse('policies: []\npolicies: []\n'), /yaml parse failed: yaml:p.yaml: Map keys must be unique/)
  t.throws(
    () => parse('policies:\n  - name: !!js/function "function(){}"\n    type: kill-switch\n'),
    /yaml parse failed: .*Unresolved tag/
  )
  t.throws(
    () => parse('policies:\n  - name: !custom x\n    type: kill-switch\n'),
    /yaml parse failed: .*Unresolved tag: !custom/
  )
  const bomb = [
    'a: &a [x,x,x,x,x,x,x,x,x,x]',
    'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]',
    'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]',
    'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]',
    'e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]'
  ].join('\n')
  t.throws(() => parse(bomb), /yaml parse failed/)
  t.throws(() => parse('policies: [\n'), /yaml parse failed/)
})

t.test('swappable: true and dry-run: true wrap the entry', async (t) => {
  const [s, d] = parse(
    'policies:\n  - {name: s, type: kill-switch, swappable: true}\n  - {name: d, type: deny-list, dry-run: true, config: {phrases: [bad]}}\n'
  )
  t.ok(s instanceof SwappablePolicy)
  t.ok(d instanceof DryRunPolicy)
  t.same(d!.evaluate(pre('bad thing')), { decision: 'admit' }, 'dry run never blocks')
  t.same((d as DryRunPolicy).counters, { admits: 0, denies: 1, transforms: 0, errors: 0 })
  t.throws(
    () => parse('policies:\n  - {name: s, type: kill-switch, swappable: yes-please}\n'),
    /'swappable' must be true or false/
  )
})

t.test('parsers are found by format; yaml is built in', async (t) => {
  const reg = new PolicyRegistry()
  registerBuiltins(reg)
  const parsers = new ParserRegistry()
  parsers.register(new YamlPolicyParser(reg))
  t.ok(parsers.get('YAML'))
  t.equal(parsers.get('rego'), undefined)
  const off = parsers.register({
    format: 'lines',
    parse: (src, text) =>
      text
        .split('\n')
        .filter(Boolean)
        .map((name) => ({
          name,
          source: src,
          version: '1',
          className: 'X',
          evaluate: () => ({ decision: 'admit' as const })
        }))
  })
  t.same(parsers.formats(), ['lines', 'yaml'])
  t.equal(parsers.get('lines')!.parse('lines:x', 'a\nb').length, 2)
  off()
  t.same(parsers.formats(), ['yaml'])
})

t.test('the registry registers custom factories and rejects blank types', async (t) => {
  const reg = new PolicyRegistry()
  reg.register('Custom', (d) => ({
    name: d.name,
    source: d.source,
    version: d.version,
    className: 'C',
    evaluate: () => ({ decision: 'admit' })
  }))
  t.ok(reg.has('custom'))
  t.equal(reg.build('CUSTOM', { name: 'n', source: 's', version: 'v', config: {} }).className, 'C')
  t.throws(
    () =>
      reg.register(' ', () => {
        throw new Error()
      }),
    /type must not be blank/
  )
  t.throws(() => reg.build('other', { name: 'n', source: 's', version: 'v', config: {} }), {
    message: "unknown policy type 'other' (known: [custom])"
  })
})
