// A scope classifier: OUT_OF_SCOPE when the message names a forbidden topic, otherwise a
// similarity from the overlap between the message's words and the declared purpose.
import { definePlugin, classifier } from 'uws-agent-platform/sdk'

const STOP = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'of',
  'to',
  'in',
  'on',
  'for',
  'with',
  'about',
  'is',
  'are',
  'how',
  'what',
  'do',
  'i',
  'you',
  'can',
  'me',
  'my',
  'it'
])
const terms = (s) =>
  new Set(
    String(s)
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 1 && !STOP.has(w))
      .map((w) => w.replace(/s$/, ''))
  )

export default definePlugin({
  classifiers: [
    classifier({
      name: 'keyword-overlap',
      description:
        'Forbidden-topic phrases deny; otherwise the share of message terms found in the purpose, against scope.similarityThreshold',
      classify: (request, scope) => {
        const message = String(request.message ?? '').toLowerCase()
        for (const topic of scope.forbiddenTopics ?? []) {
          if (message.includes(String(topic).toLowerCase()))
            return { outcome: 'OUT_OF_SCOPE', reason: `forbidden topic: ${topic}`, similarity: 0 }
        }
        const want = terms(scope.purpose ?? '')
        const got = terms(message)
        if (want.size === 0) return { outcome: 'IN_SCOPE', reason: 'no purpose declared', similarity: 1 }
        if (got.size === 0) return { outcome: 'IN_SCOPE', reason: 'empty message', similarity: 1 }
        let hits = 0
        for (const w of got) if (want.has(w)) hits++
        const similarity = hits / got.size
        const threshold = typeof scope.similarityThreshold === 'number' ? scope.similarityThreshold : 0.45
        return similarity >= threshold
          ? { outcome: 'IN_SCOPE', reason: `${hits} of ${got.size} terms match the purpose`, similarity }
          : { outcome: 'OUT_OF_SCOPE', reason: `only ${hits} of ${got.size} terms match the purpose`, similarity }
      }
    })
  ]
})
