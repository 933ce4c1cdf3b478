export { EventBus, type PlatformEvent, type EventType } from './bus.js'
export { InProcessHub, checkTopic } from './in-process-backplane.js'
