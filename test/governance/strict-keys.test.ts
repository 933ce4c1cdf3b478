import t from 'tap'
import { parser } from '../helpers/governance.js'

const parse = (yaml: string) => parser().parse('yaml:policies/p.yaml', yaml)

t.test(
  'a misspelt key at any level of either schema is refused with the key, file, line and a suggestion',
  async (t) => {
    const cases: [string, RegExp][] = [
      [
        'version: "1"\npolices:\n  - {name: a, type: kill-switch}\n',
        /unknown key 'polices' in the policy document of yaml:policies\/p\.yaml line 2 \(did you mean 'policies'\?\)/
      ],
      [
        'rules: []\ndefault:\n  action: deny\n',
        /unknown key 'default' in the rules document of yaml:policies\/p\.yaml line 2 \(did you mean 'defaults'\?\)/
      ],
      [
        'rules:\n  - name: r\n    condition: {field: a, operator: eq, value: 1}\n    action: deny\n    priorty: 3\n',
        /unknown key 'priorty' in rules\[0\] \('r'\) of yaml:policies\/p\.yaml line 5 \(did you mean 'priority'\?\)/
      ],
      [
        'rules:\n  - name: r\n    condition:\n      field: a\n      operater: eq\n      value: 1\n    action: deny\n',
        /unknown key 'operater' in the condition of rules\[0\] \('r'\) of yaml:policies\/p\.yaml line 5 \(did you mean 'operator'\?\)/
      ],
      [
        'rules: []\ndefaults:\n  actoin: deny\n',
        /unknown key 'actoin' in 'defaults' of yaml:policies\/p\.yaml line 3 \(did you mean 'action'\?\)/
      ],
      [
        'policies:\n  - name: a\n    type: kill-switch\n    dryrun: true\n',
        /unknown key 'dryrun' in policies\[0\] \('a'\) of yaml:policies\/p\.yaml line 4 \(did you mean 'dry-run'\?\)/
      ],
      [
        'version: "1"\npolicies: []\nrules_extra: 1\n',
        /unknown key 'rules_extra' in the policies document of yaml:policies\/p\.yaml line 3/
      ]
    ]
    for (const [yaml, re] of cases)
      t.throws(() => parse(yaml), { code: 'PLT_ERR_POLICY_LOAD_FAILED', message: re }, yaml)
  }
)

t.test('a key far from every known key gets no suggestion but the allowed list', async (t) => {
  t.throws(
    () =>
      parse(
        'rules:\n  - name: r\n    condition: {field: a, operator: eq, value: 1}\n    action: deny\n    dynamic_condition: {type: time_window}\n'
      ),
    {
      message:
        /unknown key 'dynamic_condition' in rules\[0\] \('r'\) of yaml:policies\/p\.yaml line 5; allowed: name, condition, action, priority, message$/
    }
  )
})

t.test('the typo that used to allow everything now fails closed', async (t) => {
  // before: `default:` was ignored, so defaults.action stayed `allow` and every request passed
  t.throws(
    () =>
      parse(
        'name: strict\nrules:\n  - name: ok\n    condition: {field: user_id, operator: eq, value: admin}\n    action: allow\ndefault:\n  action: deny\n'
      ),
    /did you mean 'defaults'/
  )
  t.throws(
    () => parse('polices:\n  - {name: block, type: deny-list, config: {phrases: [x]}}\n'),
    /did you mean 'policies'/
  )
})

t.test('known keys still load, including the toolkit defaults that are not enforced', async (t) => {
  const [p] = parse(
    'version: "1.0"\nname: n\ndescription: d\nrules:\n  - {name: r, condition: {field: a, operator: eq, value: 1}, action: deny, priority: 2, message: m}\ndefaults:\n  action: allow\n  max_tool_calls: 10\n'
  )
  t.equal(p!.name, 'n')
  t.same(
    parse(
      'version: "1"\npolicies:\n  - {name: a, type: kill-switch, version: "2", description: x, swappable: true, dry-run: false, config: {}}\n'
    ).map((x) => x.name),
    ['a']
  )
  t.same(parse(''), [])
})

t.test("a built-in type's config is strict too: a misspelt optional key is not a silent default", async (t) => {
  // before: `zones` was ignored and the window ran in UTC
  t.throws(
    () =>
      parse(
        'policies:\n  - name: office\n    type: time-window\n    config:\n      start: "08:00"\n      zones: Europe/Paris\n'
      ),
    {
      message:
        /unknown key 'zones' in the config of policies\[0\] \('office', type time-window\) of yaml:policies\/p\.yaml line 6 \(did you mean 'zone'\?\); allowed: start, end, zone, days/
    }
  )
  t.throws(
    () => parse('policies:\n  - {name: pii, type: pii-redaction, config: {mdoe: block}}\n'),
    /unknown key 'mdoe' .*\(did you mean 'mode'\?\)/
  )
  t.throws(
    () => parse('policies:\n  - {name: ks, type: kill-switch, config: {armed: true}}\n'),
    /unknown key 'armed' in the config of policies\[0\] \('ks', type kill-switch\).*; allowed: none$/
  )
  t.same(
    parse(
      'policies:\n  - {name: office, type: time-window, config: {start: "08:00", end: "18:00", zone: Europe/Paris, days: [MONDAY]}}\n'
    ).map((p) => p.name),
    ['office']
  )
})
