export { EventBus, type PlatformEvent, type EventType } from './bus.js'
