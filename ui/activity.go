package ui

import (
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// MaxActivity is how many tool calls the Activity view keeps, whatever the
// State carries: the table must stay cheap however long Reins runs.
const MaxActivity = 200

var activityColumns = []struct {
	title string
	width float32
}{
	{"Time", 150}, {"Agent", 170}, {"Tool", 200}, {"Tab", 70}, {"Outcome", 150}, {"Duration", 100},
}

// activityView is a table of recent tool calls, newest first.
type activityView struct {
	rows    []Activity // newest first, at most MaxActivity
	table   *widget.Table
	empty   *widget.Label
	content fyne.CanvasObject
}

func newActivityView() *activityView {
	v := &activityView{}
	v.table = widget.NewTable(
		func() (int, int) { return len(v.rows), len(activityColumns) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		v.cell,
	)
	v.table.ShowHeaderRow = true
	v.table.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	v.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(activityColumns) {
			o.(*widget.Label).SetText(activityColumns[id.Col].title)
		}
	}
	for i, c := range activityColumns {
		v.table.SetColumnWidth(i, c.width)
	}
	v.empty = secondary("No tool calls yet. Every call an agent makes shows up here with its outcome.")
	v.content = container.NewStack(v.table, container.NewPadded(v.empty))
	return v
}

func (v *activityView) update(all []Activity) {
	if len(all) > MaxActivity {
		all = all[len(all)-MaxActivity:]
	}
	rows := make([]Activity, len(all))
	for i, a := range all {
		rows[len(all)-1-i] = a
	}
	v.rows = rows
	if len(rows) == 0 {
		v.empty.Show()
		v.table.Hide()
	} else {
		v.empty.Hide()
		v.table.Show()
	}
	v.table.Refresh()
}

func (v *activityView) cell(id widget.TableCellID, o fyne.CanvasObject) {
	l := o.(*widget.Label)
	if id.Row < 0 || id.Row >= len(v.rows) {
		l.SetText("")
		return
	}
	a := v.rows[id.Row]
	text, imp := "", widget.MediumImportance
	switch id.Col {
	case 0:
		text = a.Time.Local().Format("Jan 2 15:04:05")
	case 1:
		text = untrusted(a.Agent, 60)
	case 2:
		text = a.Tool
	case 3:
		text = "—"
		if a.TabID != 0 {
			text = strconv.Itoa(a.TabID)
		}
	case 4:
		text = a.Outcome
		imp = widget.SuccessImportance
		if a.Outcome != "ok" {
			imp = widget.DangerImportance
		}
	case 5:
		text = duration(a.Duration)
	}
	l.Importance = imp
	l.SetText(text)
}
