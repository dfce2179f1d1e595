package e2e

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/e2e/internal/taskpages"
)

// The agent-task suite: realistic local pages, one per capability, each
// completed through MCP tools alone, as an agent would, and each judged by
// the page or the server (taskpages), never by what a tool answered.
// javascript_tool is not allowed here: a task an agent can only finish by
// running its own script is a gap in the tools.
//
// A task registers itself from the file of its capability
// (tasks_<capability>_test.go) with registerTask in an init function; the
// suite runs every task on Chromium through the extension, on the dev
// browser, and on Firefox.

// agentTask is one task page and the tool calls that complete it.
type agentTask struct {
	name string
	// setup adds the task's server-side routes before its page opens.
	setup func(pages *taskpages.Server)
	// run completes the task through the agent's tools.
	run func(a *taskAgent)
	// notOn names transports ("chromium", "dev", "firefox") where the task
	// cannot be done, with the reason; run is then skipped there, and
	// unsupported, when set, checks the clear refusal the agent gets.
	notOn       map[string]string
	unsupported func(a *taskAgent)
}

var agentTasks []agentTask

func registerTask(t agentTask) {
	if i := slices.IndexFunc(agentTasks, func(o agentTask) bool { return o.name == t.name }); i >= 0 {
		panic("two tasks named " + t.name)
	}
	agentTasks = append(agentTasks, t)
}

// taskDeadline bounds one task, tool calls and the page's verdict included.
const taskDeadline = 90 * time.Second

// taskAgent is the agent's side of one task: an MCP session and the tab the
// task's page opened in.
type taskAgent struct {
	t         *testing.T
	cs        *mcp.ClientSession
	pages     *taskpages.Server
	transport string
	tab       int
}

// call runs a tool and returns its result; javascript_tool fails the test.
func (a *taskAgent) call(tool string, args map[string]any) toolOut {
	a.t.Helper()
	if tool == "javascript_tool" {
		a.t.Fatalf("the task suite must be done without javascript_tool")
	}
	return callTool(a.t, a.cs, tool, args)
}

// must runs a tool that must succeed.
func (a *taskAgent) must(tool string, args map[string]any) toolOut {
	a.t.Helper()
	out := a.call(tool, args)
	if out.isErr {
		a.t.Fatalf("%s %v failed: %s", tool, args, out.text)
	}
	return out
}

// on runs a tool on the task's tab.
func (a *taskAgent) on(tool string, args map[string]any) toolOut {
	a.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	args["tabId"] = a.tab
	return a.must(tool, args)
}

// open opens url in a new tab of the agent's group and makes it the task's
// tab.
func (a *taskAgent) open(url string) {
	a.t.Helper()
	out := a.must("tabs_create_mcp", map[string]any{"url": url})
	m := createdRE.FindStringSubmatch(out.text)
	if m == nil {
		a.t.Fatalf("tabs_create_mcp answered %s", out.text)
	}
	a.tab, _ = strconv.Atoi(m[1])
}

// find returns the ref of the element find describes by query whose line
// mentions what.
func (a *taskAgent) find(query, what string) string {
	a.t.Helper()
	return refFor(a.t, a.on("find", map[string]any{"query": query}).text, what)
}

// click clicks the element with ref.
func (a *taskAgent) click(ref string) toolOut {
	a.t.Helper()
	return a.on("computer", map[string]any{"action": "left_click", "ref": ref})
}

// runTasks runs every registered task against the browser r sees first.
func runTasks(t *testing.T, r *harness.Reins, transport string) {
	pages := taskpages.Start()
	t.Cleanup(pages.Close)
	cs := mcpSession(t, r, "tasks-"+transport)
	tasks := slices.Clone(agentTasks)
	slices.SortFunc(tasks, func(x, y agentTask) int { return strings.Compare(x.name, y.name) })
	for _, task := range tasks {
		if task.setup != nil {
			task.setup(pages)
		}
	}
	for _, task := range tasks {
		if why, ok := task.notOn[transport]; ok && task.unsupported == nil {
			t.Logf("%s is not run on %s: %s", task.name, transport, why)
			continue
		}
		t.Run(task.name, func(t *testing.T) {
			a := &taskAgent{t: t, cs: cs, pages: pages, transport: transport}
			// The agent tidies up as it would: with the tab tool.
			defer func() {
				if a.tab != 0 && !t.Failed() {
					a.must("tab", map[string]any{"tabId": a.tab, "action": "close"})
				}
			}()
			if _, ok := task.notOn[transport]; ok {
				task.unsupported(a)
				return
			}
			task.run(a)
			detail, err := pages.Wait(within(t, taskDeadline), task.name)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s done on %s: %s", task.name, transport, detail)
		})
	}
}

func TestAgentTasksWithChromium(t *testing.T) {
	s := newStack(t)
	runTasks(t, s.Reins, "chromium")
}

func TestAgentTasksWithTheDevBrowser(t *testing.T) {
	r := startDevReins(t)
	runTasks(t, r, "dev")
}

func TestAgentTasksWithFirefox(t *testing.T) {
	s := newFirefoxStack(t)
	runTasks(t, s.Reins, "firefox")
}

// The first tasks: forms and reading, which the catalog already covers.
func init() {
	registerTask(agentTask{
		name: "login",
		setup: func(pages *taskpages.Server) {
			pages.Handle("POST /login", func(w http.ResponseWriter, r *http.Request) {
				if r.FormValue("email") == "ada@example.test" && r.FormValue("password") == "correct horse" {
					pages.Done("login", "remember="+r.FormValue("remember"))
					http.Redirect(w, r, "/task/welcome", http.StatusSeeOther)
					return
				}
				http.Error(w, "wrong email or password", http.StatusUnauthorized)
			})
		},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/login"))
			a.on("form_input", map[string]any{"ref": a.find("email field", "Email"), "value": "ada@example.test"})
			a.on("form_input", map[string]any{"ref": a.find("password field", "Password"), "value": "correct horse"})
			a.click(a.find("Sign in button", `button "Sign in"`))
		},
	})
	registerTask(agentTask{
		name: "select",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/select"))
			a.on("form_input", map[string]any{"ref": a.find("Country select", "Country"), "value": "Portugal"})
			a.on("form_input", map[string]any{"ref": a.find("Speed select", "Speed"), "value": "Express (2 days)"})
			a.click(a.find("Save button", `button "Save"`))
		},
	})
	registerTask(agentTask{
		name: "table",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/table"))
			text := a.on("get_page_text", nil).text
			best := highestThird(a.t, text)
			a.on("form_input", map[string]any{"ref": a.find("answer box", "highest Q3"), "value": best})
			a.click(a.find("Check button", `button "Check"`))
		},
	})
}

// highestThird reads the revenue table as get_page_text gives it: a row a
// line, or cells a line; it returns the region whose Q3 figure is highest.
func highestThird(t *testing.T, text string) string {
	t.Helper()
	fields := strings.Fields(text)
	best, bestV := "", -1
	for i := 0; i+4 < len(fields); i++ {
		var vals [4]int
		ok := fields[i] != "" && (fields[i][0] >= 'A' && fields[i][0] <= 'Z')
		for j := 0; ok && j < 4; j++ {
			v, err := strconv.Atoi(fields[i+1+j])
			vals[j], ok = v, err == nil
		}
		if ok && vals[2] > bestV {
			best, bestV = fields[i], vals[2]
		}
	}
	if best == "" {
		t.Fatalf("no revenue table in the page text:\n%s", text)
	}
	return best
}
