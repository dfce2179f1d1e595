module github.com/reinshq/reins

go 1.26.8
