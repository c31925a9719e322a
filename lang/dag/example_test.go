package dag_test

import (
	"fmt"
	"os"

	"github.com/fuscia/fuscia/lang/dag"
)

func Example() {
	g := dag.New()
	g.AddNode("task.fetch", dag.NodeAttrs{Label: "task.fetch\n(builtin.http)"})
	g.AddNode("task.parse", dag.NodeAttrs{})
	g.AddNode("task.store", dag.NodeAttrs{})
	g.AddNode("task.report", dag.NodeAttrs{})
	g.AddEdge("task.fetch", "task.parse", "")
	g.AddEdge("task.fetch", "task.store", "")
	g.AddEdge("task.parse", "task.report", "")
	g.AddEdge("task.store", "task.report", "")

	stages, err := g.Stages()
	if err != nil {
		fmt.Println(err)
		return
	}
	for k, s := range stages {
		fmt.Println(k, s)
	}
	// Output:
	// 0 [task.fetch]
	// 1 [task.parse task.store]
	// 2 [task.report]
}

func ExampleGraph_Cycles() {
	g := dag.New()
	for _, id := range []string{"task.a", "task.b", "task.c"} {
		g.AddNode(id, dag.NodeAttrs{})
	}
	g.AddEdge("task.a", "task.b", "")
	g.AddEdge("task.b", "task.c", "")
	g.AddEdge("task.c", "task.a", "")

	fmt.Println(g.Cycles())
	_, err := g.Stages()
	fmt.Println(err)
	// Output:
	// [[task.a task.b task.c task.a]]
	// dag: graph has a cycle: task.a -> task.b -> task.c -> task.a
}

func ExampleGraph_WriteMermaid() {
	g := dag.New()
	g.AddNode("switch.route", dag.NodeAttrs{})
	g.AddNode("loop.notify/task.send", dag.NodeAttrs{Cluster: "loop.notify"})
	g.AddEdge("switch.route", "loop.notify/task.send", "ok")
	g.AddEdge("switch.route", "loop.notify/task.send", "retry")

	if err := g.WriteMermaid(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// flowchart TD
	//     switch_route["switch.route"]
	//     subgraph cluster_loop_notify["loop.notify"]
	//         loop_notify_task_send["loop.notify/task.send"]
	//     end
	//     switch_route -->|"ok, retry"| loop_notify_task_send
}
