// The conventions test/docs/examples.test.ts reads pages by: a mistake here would let broken
// examples pass, so each rule is pinned.
import t from 'tap'
import { parseDirective, outsideReason, readBlocks } from '../helpers/doc-pages.js'
import { steps, matchOutput, substitute, rewriteHost } from '../helpers/doc-shell.js'

t.test('example comments: config keys, shell variables, options; anything else is refused', async (t) => {
  const d = parseDirective(
    'platform.admin.http-write-enabled=true platform.auth.tokens=[{"token":"a b"}] TOKEN=s3cret as=policy error="x \\"y\\""',
    'p.md:1'
  )
  t.same(d.config, { 'platform.admin.http-write-enabled': true, 'platform.auth.tokens': [{ token: 'a b' }] })
  t.same(d.env, { TOKEN: 's3cret' })
  t.same(d.opts, { as: 'policy', error: 'x "y"' })
  t.same(parseDirective('continue', 'p.md:1').opts, { continue: 'true' })
  t.throws(() => parseDirective('plattform=1', 'p.md:9'), /p\.md:9: unknown setting 'plattform'/)
  t.throws(() => parseDirective('run it', 'p.md:9'), /cannot read 'run'/)
  t.throws(() => parseDirective('platform.x=[1,', 'p.md:9'), /'platform.x' .* not valid JSON/)
})

t.test('a block splits into commands, their outputs and statuses', async (t) => {
  const s = steps(
    [
      '# a prose comment',
      'TOKEN=...   # from the config',
      'curl -s localhost:8080/a -d \'{"x":',
      "  1}' \\",
      '  -H "X: #not-a-comment"',
      '# → {"ok":true}',
      '',
      '# prose after a blank line',
      'curl -X DELETE localhost:8080/b   # 204',
      'platform plugins list   # exit 1',
      'npm test'
    ].join('\n'),
    10
  )
  t.same(
    s.map((x) => [x.line, x.kind, x.expected, x.status]),
    [
      [12, 'assign', [], undefined],
      [13, 'curl', ['{"ok":true}'], undefined],
      [19, 'curl', [], 204],
      [20, 'platform', [], 1],
      [21, 'other', [], undefined]
    ]
  )
  t.equal(s[1]!.command, 'curl -s localhost:8080/a -d \'{"x":\n  1}\'  -H "X: #not-a-comment"')
})

t.test('outputs: … is anything, a hex prefix with … is a value bound once and reused', async (t) => {
  const bound = new Map<string, string>()
  t.equal(
    matchOutput('{"uuid":"9d3e…","members":["9d3e…"],…}', '{"uuid":"u-1","members":["u-1"],"n":1}', bound),
    undefined
  )
  t.equal(bound.get('9d3e…'), 'u-1')
  t.match(
    matchOutput('{"uuid":"9d3e…"}', '{"uuid":"u-2"}', bound),
    /expected output containing/,
    'a bound value must repeat'
  )
  t.match(
    matchOutput('{"a":"6f1c…","b":"6f1c…"}', '{"a":"x","b":"y"}', new Map()),
    /expected output containing/,
    'the same placeholder twice is the same value'
  )
  t.equal(
    matchOutput('{"a": 1, "b": 2}', 'HTTP/1.1 200 OK\r\n\r\n{"a":1,"b":2}', new Map()),
    undefined,
    'layout spaces are not significant'
  )
  t.match(matchOutput('{"a":1}', '{"a":12}', new Map()), /expected/, 'values are not prefixes')
  t.same(substitute("curl -H 'X: 9d3e…' -H 'Y: 5b7a…'", bound), {
    command: "curl -H 'X: u-1' -H 'Y: 5b7a…'",
    unbound: ['5b7a…']
  })
})

t.test('the documented address becomes the test server', async (t) => {
  t.equal(
    rewriteHost("curl localhost:8080/a 'http://127.0.0.1:8080/b?c' https://localhost:8080/d", 4321),
    "curl http://127.0.0.1:4321/a 'http://127.0.0.1:4321/b?c' http://127.0.0.1:4321/d"
  )
  t.equal(rewriteHost('curl https://mcp.example.com/x', 4321), 'curl https://mcp.example.com/x')
})

t.test('pointers outside the repository are found; ordinary words are not', async (t) => {
  for (const line of [
    'see ../shared/spec/platform-spec.md',
    'as DESIGN §4 says',
    'spec § 7.2',
    "the spec's init parameters",
    'as in the reference, so',
    "the reference's `hardenSystemPrompt`",
    'with the reference wording',
    'both issue 2 targets'
  ]) {
    t.ok(outsideReason(line), line)
  }
  for (const line of [
    'RFC 9728 §3.1 location',
    'its open issue #107 reports',
    'the reference count drops',
    'a reference to the plugin',
    'the 2026-07-28 specification describes'
  ]) {
    t.notOk(outsideReason(line), line)
  }
})

t.test('blocks carry their line, heading and the comment right before them', async (t) => {
  const page = [
    '# Top',
    '## Part',
    '<!-- example: TOKEN=x -->',
    '',
    '```sh',
    'curl localhost:8080/a',
    '```',
    'text',
    '- item',
    '  ```yaml',
    '  a: 1',
    '  ```',
    '<!-- example skip: needs a model on the network -->',
    '```json',
    '{}',
    '```'
  ].join('\n')
  const b = readBlocks('p.md', page)
  t.same(
    b.map((x) => [x.line, x.lang, x.heading, x.text]),
    [
      [5, 'sh', 'Part', 'curl localhost:8080/a\n'],
      [10, 'yaml', 'Part', 'a: 1\n'],
      [14, 'json', 'Part', '{}\n']
    ]
  )
  t.same(b[0]!.directive.env, { TOKEN: 'x' })
  t.same(b[1]!.directive, { config: {}, env: {}, opts: {} })
  t.equal(b[2]!.directive.skip, 'needs a model on the network')
  t.throws(
    () => readBlocks('p.md', '<!-- example: TOKEN=x -->\nsome prose\n```sh\ncurl x\n```'),
    /p\.md:1: an example comment must stand right before a fenced code block/
  )
  t.throws(() => readBlocks('p.md', '<!-- example skip: no -->\n```sh\ncurl x\n```'), /needs a reason/)
  t.throws(() => readBlocks('p.md', '```sh\ncurl x\n'), /p\.md:1: code fence never closed/)
})
