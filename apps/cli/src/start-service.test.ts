import { heapGrowthFlag } from './start-service';

describe('heapGrowthFlag', () => {
  it('asks V8 for the configured heap growth, 100% by default, and leaves V8 its own for 0', () => {
    expect(heapGrowthFlag({})).toBe('--heap-growing-percent=100');
    expect(heapGrowthFlag({ HEAP_GROWTH_PERCENT: '120' })).toBe('--heap-growing-percent=120');
    expect(heapGrowthFlag({ HEAP_GROWTH_PERCENT: '0' })).toBeNull();
  });

  it('sets nothing for an invalid configuration: the launcher refuses it with every other problem', () => {
    expect(heapGrowthFlag({ HEAP_GROWTH_PERCENT: 'lots' })).toBeNull();
    expect(heapGrowthFlag({ MAX_BODY_SIZE: 'huge' })).toBeNull();
  });
});
