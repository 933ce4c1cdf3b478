// Custom governance policy types. In a policy file:
//   policies:
//     - name: short-prompts
//       type: word-limit
//       config: { max: 200 }
import { definePlugin, policyType, admit, deny, transform, prefer } from 'uws-agent-platform/sdk'

const wordCount = (s) => (s.trim() === '' ? 0 : s.trim().split(/\s+/).length)

export default definePlugin({
  policyTypes: [
    policyType({
      type: 'word-limit',
      description:
        'Denies a request whose message has more than config.max words (default 200); with config.prefer set, prefers that agent instead',
      evaluate: (context, config) => {
        if (context.phase !== 'PRE_ADMISSION') return admit()
        const max = Number.isInteger(config.max) ? config.max : 200
        const n = wordCount(context.request.message)
        if (n <= max) return admit()
        if (typeof config.prefer === 'string') return prefer(config.prefer, `message has ${n} words, more than ${max}`)
        return deny(`message has ${n} words, more than the limit of ${max}`)
      }
    }),
    policyType({
      type: 'shout-guard',
      description: 'Rewrites a message written in capitals to lower case',
      evaluate: (context) => {
        const m = context.request.message
        if (context.phase !== 'PRE_ADMISSION' || m.length < 8 || m !== m.toUpperCase() || m === m.toLowerCase())
          return admit()
        return transform({ ...context.request, message: m.toLowerCase() }, 'message written in capitals, lower-cased')
      }
    })
  ]
})
