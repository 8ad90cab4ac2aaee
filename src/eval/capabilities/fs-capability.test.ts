import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { evalError, evalValue, evalWorkshop } from './test-eval-workshop.ts'

describe('the fs capability', () => {
  it('removes a link itself, never what it points to', async () => {
    await using fixture = await evalWorkshop({ files: { 'README.md': 'keep me\n' } })
    await fs.symlink('README.md', path.join(fixture.scratch.workspace, 'lnk'))
    assert.equal(
      evalValue(await fixture.run('await fs.remove("lnk"); await fs.exists("lnk")')),
      'false',
    )
    assert.equal(
      await fs.readFile(path.join(fixture.scratch.workspace, 'README.md'), 'utf8'),
      'keep me\n',
    )
  })

  it('globs as the glob tool does: what .gitignore files ignore is skipped unless named', async () => {
    await using fixture = await evalWorkshop({
      files: {
        '.gitignore': 'node_modules/\n',
        'src/x.js': 'x',
        'node_modules/dep/index.js': 'dep',
        'node_modules/dep/lib/.gitignore': '',
      },
    })
    assert.equal(evalValue(await fixture.run('(await fs.glob("**/*.js")).join()')), 'src/x.js')
    assert.equal(
      evalValue(await fixture.run('(await fs.glob("**/*.js", { path: "node_modules" })).join()')),
      'node_modules/dep/index.js',
    )
  })

  it('reads, writes, lists, globs, stats and removes through the path policy', async () => {
    await using fixture = await evalWorkshop({
      files: { 'a.txt': 'alpha\n', 'src/x.ts': 'x', 'src/y.ts': 'y' },
    })
    assert.equal(evalValue(await fixture.run('await fs.readFile("a.txt")')), 'alpha\n')
    assert.equal(
      evalValue(await fixture.run('JSON.stringify(await fs.writeFile("out/b.txt", "beta"))')),
      '{"path":"out/b.txt","bytes":4,"created":true}',
    )
    assert.equal(
      await fs.readFile(path.join(fixture.scratch.workspace, 'out/b.txt'), 'utf8'),
      'beta',
    )
    assert.equal(
      evalValue(await fixture.run('(await fs.list()).map((e) => `${e.path}:${e.type}`).join()')),
      'a.txt:file,out:directory,src:directory',
    )
    assert.equal(
      evalValue(await fixture.run('(await fs.glob("**/*.ts")).join()')),
      'src/x.ts,src/y.ts',
    )
    assert.equal(evalValue(await fixture.run('(await fs.stat("a.txt")).size')), '6')
    assert.equal(
      evalValue(
        await fixture.run(
          '[await fs.exists("a.txt"), await fs.exists("nope"), await fs.stat("nope")].join()',
        ),
      ),
      'true,false,',
    )
    assert.equal(
      evalValue(await fixture.run('await fs.remove("a.txt"); await fs.exists("a.txt")')),
      'false',
    )
    assert.equal(
      evalValue(
        await fixture.run(
          'await fs.writeFile("bin.dat", "AAEC", { encoding: "base64" }); await fs.readFile("bin.dat", { encoding: "base64" })',
        ),
      ),
      'AAEC',
    )
  })

  it("refuses paths outside the workspace and protected paths, with the policy's code and no host path", async () => {
    await using fixture = await evalWorkshop()
    for (const [code, refusal] of [
      ['await fs.readFile("../config.json")', 'path_outside_workspace'],
      ['await fs.readFile("/etc/passwd")', 'path_outside_workspace'],
      ['await fs.writeFile(".git/hooks/pre-commit", "x")', 'protected_path'],
    ] as const) {
      const content = evalError(await fixture.run(code), 'eval_error')
      assert.match(content, new RegExp(`\\[${refusal}\\]`), code)
      assert.doesNotMatch(content, new RegExp(fixture.scratch.root))
    }
    assert.equal(
      evalValue(await fixture.run('try { await fs.readFile("../x") } catch (e) { e.code }')),
      'path_outside_workspace',
    )
  })

  it('refuses every write under read-only access, naming the access in force', async () => {
    await using fixture = await evalWorkshop({
      files: { 'keep.txt': 'k' },
      workshop: { access: 'read-only' },
    })
    for (const code of ['await fs.writeFile("new.txt", "x")', 'await fs.remove("keep.txt")']) {
      const content = evalError(await fixture.run(code), 'eval_error')
      assert.match(content, /\[read_only_access\].*read-only/, code)
    }
    assert.equal(evalValue(await fixture.run('await fs.readFile("keep.txt")')), 'k')
    await assert.rejects(fs.access(path.join(fixture.scratch.workspace, 'new.txt')))
  })
})
